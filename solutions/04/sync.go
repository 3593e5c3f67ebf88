package stock

import "time"

// syncEvery writes the tree back every SyncInterval while clients are
// connected. With no client connected nothing changes, and the last one to
// leave has triggered a write-back already.
func (s *Server) syncEvery() {
	tick := time.NewTicker(s.cfg.SyncInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-tick.C:
			if s.clients() > 0 {
				s.sync("interval")
			}
		}
	}
}

// sync writes the tree back to the stock file if it changed since the last
// write-back, and reports the result to the log and to Config.OnSync.
//
// The snapshot is taken under the tree's read lock; the file is written after
// releasing it, so a slow disk never holds up the clients. A failed write
// leaves the old file (the Saver writes atomically) and marks the tree dirty
// again, so the next sync retries.
func (s *Server) sync(why string) error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	if !s.dirty.Swap(false) {
		return nil
	}
	s.lock.RLock()
	stocks := s.tree.PreOrder()
	s.lock.RUnlock()
	err := s.cfg.Saver.Save(s.cfg.StockPath, stocks)
	if err != nil {
		s.dirty.Store(true)
		s.log.Error("writing the stock file back failed; the old file is intact", "why", why, "err", err)
	} else {
		s.log.Debug("stock file written back", "why", why, "stocks", len(stocks))
	}
	if s.cfg.OnSync != nil {
		s.cfg.OnSync(err)
	}
	return err
}
