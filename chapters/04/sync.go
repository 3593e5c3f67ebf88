package stock

// syncEvery writes the tree back every SyncInterval while clients are
// connected. With no client connected nothing changes, and the last one to
// leave has triggered a write-back already.
func (s *Server) syncEvery() {
	// TODO(ex 4.6): a time.NewTicker(s.cfg.SyncInterval) (stop it when done);
	// loop: on <-s.quit return; on a tick, s.sync("interval") if
	// s.clients() > 0. Checked by TestEx4_6_Persistence.
}

// sync writes the tree back to the stock file if it changed since the last
// write-back, and reports the result to the log and to Config.OnSync.
//
// The snapshot is taken under the tree's read lock; the file is written after
// releasing it, so a slow disk never holds up the clients. A failed write
// leaves the old file (the Saver writes atomically) and marks the tree dirty
// again, so the next sync retries.
func (s *Server) sync(why string) error {
	// TODO(ex 4.6): hold s.saveMu for the whole write-back. If
	// s.dirty.Swap(false) says nothing changed, return nil. Take the
	// snapshot (s.tree.PreOrder()) under s.lock.RLock; write it with
	// s.cfg.Saver.Save(s.cfg.StockPath, stocks) after RUnlock. On error set
	// s.dirty again (the next sync retries) and log it with s.log.Error.
	// Either way call s.cfg.OnSync(err) if it is set, and return err.
	// Checked by TestEx4_6_Persistence.
	return nil
}
