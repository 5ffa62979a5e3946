package main

import (
	"errors"
	"time"
)

// pollInterval is --poll-interval: a duration, or "off" (the same as 0).
type pollInterval time.Duration

func (p *pollInterval) String() string {
	if *p == 0 {
		return "off"
	}
	return time.Duration(*p).String()
}

func (p *pollInterval) Set(s string) error {
	if s == "off" {
		*p = 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return errors.New(`want a duration such as 60s, or "off"`)
	}
	*p = pollInterval(d)
	return nil
}
