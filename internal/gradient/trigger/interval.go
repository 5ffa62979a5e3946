package trigger

import (
	"errors"
	"time"
)

// Interval is --poll-interval as a flag value: a duration, or "off" (the same as 0).
type Interval time.Duration

func (p *Interval) String() string {
	if *p == 0 {
		return "off"
	}
	return time.Duration(*p).String()
}

func (p *Interval) Set(s string) error {
	if s == "off" {
		*p = 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return errors.New(`want a duration such as 60s, or "off"`)
	}
	*p = Interval(d)
	return nil
}
