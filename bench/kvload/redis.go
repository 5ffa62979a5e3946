package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
)

// redisClient speaks just enough RESP for GET and SET.
type redisClient struct {
	nc  net.Conn
	br  *bufio.Reader
	out []byte
}

func dialRedis(addr string) (client, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &redisClient{nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}, nil
}

func (r *redisClient) command(args ...[]byte) error {
	r.out = append(r.out[:0], '*')
	r.out = strconv.AppendInt(r.out, int64(len(args)), 10)
	r.out = append(r.out, "\r\n"...)
	for _, a := range args {
		r.out = append(r.out, '$')
		r.out = strconv.AppendInt(r.out, int64(len(a)), 10)
		r.out = append(r.out, "\r\n"...)
		r.out = append(r.out, a...)
		r.out = append(r.out, "\r\n"...)
	}
	_, err := r.nc.Write(r.out)
	return err
}

func (r *redisClient) set(key string, val []byte) error {
	if err := r.command([]byte("SET"), []byte(key), val); err != nil {
		return err
	}
	line, err := r.br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if string(line) != "+OK\r\n" {
		return fmt.Errorf("SET answered %q", line)
	}
	return nil
}

func (r *redisClient) get(key string, buf []byte) ([]byte, error) {
	if err := r.command([]byte("GET"), []byte(key)); err != nil {
		return buf, err
	}
	line, err := r.br.ReadSlice('\n')
	if err != nil {
		return buf, err
	}
	if len(line) < 4 || line[0] != '$' {
		return buf, fmt.Errorf("GET answered %q", line)
	}
	n, err := strconv.Atoi(string(line[1 : len(line)-2]))
	if err != nil || n < 0 {
		return buf, errors.New("miss")
	}
	if cap(buf) < n+2 {
		buf = make([]byte, 0, n+2)
	}
	buf = buf[:n+2]
	if _, err := io.ReadFull(r.br, buf); err != nil {
		return buf, err
	}
	return buf[:n], nil
}

func (r *redisClient) close() { r.nc.Close() }
