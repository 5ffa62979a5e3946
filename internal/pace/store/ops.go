package store

import "fmt"

// get tries memory, then disk; a disk hit fills memory.
func (s *Store) get(key []byte) ([]byte, error) {
	if !s.enter() {
		return nil, ErrClosed
	}
	defer s.exit()
	if s.mem != nil {
		if v, dg, ok := s.mem.get(key); ok {
			if s.disk != nil {
				s.disk.touch(dg)
			}
			s.hits.Add(1)
			return v, nil
		}
	}
	if s.disk == nil {
		s.misses.Add(1)
		return nil, ErrNotFound
	}
	dg := keyDigest(key)
	v, e, err := s.disk.get(dg, key)
	if err != nil {
		s.misses.Add(1)
		return nil, err
	}
	if s.mem != nil {
		s.fillMemory(key, dg, e, v)
	}
	s.hits.Add(1)
	return v, nil
}

// fillMemory caches a disk hit, unless the key was overwritten or deleted since it was read:
// the key lock orders this against commits and deletes of the same key.
func (s *Store) fillMemory(key []byte, dg digest, e *diskEntry, v []byte) {
	lk := s.disk.keyLock(dg)
	lk.Lock()
	defer lk.Unlock()
	if s.disk.isCurrent(dg, e) {
		s.mem.put(key, dg, v)
	}
}

// put writes through: disk first (the acknowledgement), then memory.
func (s *Store) put(key, value []byte) error {
	if !s.enter() {
		return ErrClosed
	}
	defer s.exit()
	if s.disk == nil {
		if cost := int64(len(key) + len(value)); cost > s.mem.limit {
			return fmt.Errorf("%d bytes, memory budget %d: %w", cost, s.mem.limit, ErrTooLarge)
		}
		s.mem.put(key, digest{}, value)
		return nil
	}
	dg := keyDigest(key)
	st, err := s.disk.stage(dg, key, value)
	if err != nil {
		return err
	}
	lk := s.disk.keyLock(dg)
	lk.Lock()
	err = s.disk.commit(st)
	if err == nil && s.mem != nil {
		s.mem.put(key, dg, value)
	}
	lk.Unlock()
	if err != nil {
		return err
	}
	return s.disk.syncShard(dg)
}

func (s *Store) delete(key []byte) (bool, error) {
	if !s.enter() {
		return false, ErrClosed
	}
	defer s.exit()
	if s.disk == nil {
		return s.mem.remove(key), nil
	}
	dg := keyDigest(key)
	lk := s.disk.keyLock(dg)
	lk.Lock()
	defer lk.Unlock()
	inMemory := s.mem != nil && s.mem.remove(key)
	onDisk, err := s.disk.delete(dg)
	return inMemory || onDisk, err
}
