package forgestatus

import "time"

// Retry is the delivery policy of gradient-server §12.4.
type Retry struct {
	Base        time.Duration // first delay (2 s)
	Cap         time.Duration // longest delay (10 min)
	MaxAttempts int           // attempts before a status is given up (8)
}

// DefaultRetry is the policy the server uses.
var DefaultRetry = Retry{Base: 2 * time.Second, Cap: 10 * time.Minute, MaxAttempts: 8}

// Delay is the wait after failed attempt n (n >= 1): Base doubling each time up to Cap, then
// scaled by a jitter factor in [0.5, 1.5) from rand01 in [0, 1), so senders that failed
// together do not retry together.
func (r Retry) Delay(n int, rand01 float64) time.Duration {
	d := r.Base
	for i := 1; i < n && d < r.Cap; i++ {
		d *= 2
	}
	d = min(d, r.Cap)
	rand01 = min(max(rand01, 0), 1)
	return time.Duration(float64(d) * (0.5 + rand01))
}

// Retryable says whether an answer with this HTTP status may succeed later: 5xx, 408 and
// 429 may; any other 4xx will not (a bad token, an unknown repository or commit), and 2xx is
// delivered. Status 0 stands for a transport error, which may.
func Retryable(httpStatus int) bool {
	return httpStatus == 0 || httpStatus == 408 || httpStatus == 429 || httpStatus >= 500
}

// Delivered says whether the answer means the forge took the status.
func Delivered(httpStatus int) bool { return httpStatus >= 200 && httpStatus < 300 }
