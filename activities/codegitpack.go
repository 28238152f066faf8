package activities

import (
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/storage/filesystem"
)

// A pack is checked as it arrives, before go-git indexes it: go-git's parser reads each object
// whole into memory (a delta's target too), so a pack of 1 MB can make it allocate 1 GiB before
// any bound on what is written applies. gitPackCheck reads every object's header (its declared
// size, and a delta's target size) and inflates its data into a counter, never into memory,
// and refuses a pack before handing go-git the bytes that would make it allocate more than the
// clone may fetch (WEFT_CODE_GIT_MAX_BYTES): an object whose size (or a delta's target size) is
// over the bound, data inflating past the size its header declares, or objects adding up to more.

// gitPackStorage is a clone's object storage whose pack writer checks the pack first.
type gitPackStorage struct {
	*filesystem.Storage
	guard *gitClone
}

// PackfileWriter is what go-git writes a fetched pack to when the storage offers one (it
// always does when fetching into filesystem storage).
func (s gitPackStorage) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		return nil, err
	}
	return newGitPackCheck(w, s.guard), nil
}

// newGitPackCheck checks the pack written to it for guard, passing it on to w.
func newGitPackCheck(w io.WriteCloser, guard *gitClone) *gitPackCheck {
	c := &gitPackCheck{w: w, guard: guard, ch: make(chan []byte), ack: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.err = c.parse(&packFeed{c: c})
	}()
	return c
}

// gitPackCheck passes a pack on to w only once its parser has read every byte of it so far and
// found nothing to refuse.
type gitPackCheck struct {
	w     io.WriteCloser
	guard *gitClone
	ch    chan []byte   // bytes for the parser
	ack   chan struct{} // the parser has used all it was given and waits for more
	done  chan struct{} // the parser ended; err says why
	err   error
}

func (c *gitPackCheck) Write(p []byte) (int, error) {
	select {
	case c.ch <- p:
		select {
		case <-c.ack:
		case <-c.done:
		}
	case <-c.done:
	}
	if c.finished() && c.err != nil {
		return 0, c.err
	}
	return c.w.Write(p)
}

func (c *gitPackCheck) finished() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *gitPackCheck) Close() error {
	close(c.ch)
	<-c.done
	err := c.w.Close()
	var ie *InputError
	if asInput(c.err, &ie) {
		return ie
	}
	return err
}

// packFeed is what the parser reads: the chunks Write hands it, byte by byte when asked (so the
// zlib reader never reads past an object's data).
type packFeed struct {
	c   *gitPackCheck
	cur []byte
	fed bool
}

func (f *packFeed) next() bool {
	for len(f.cur) == 0 {
		if f.fed {
			f.c.ack <- struct{}{}
		}
		p, ok := <-f.c.ch
		if !ok {
			return false
		}
		f.cur, f.fed = p, true
	}
	return true
}

func (f *packFeed) ReadByte() (byte, error) {
	if !f.next() {
		return 0, io.ErrUnexpectedEOF
	}
	b := f.cur[0]
	f.cur = f.cur[1:]
	return b, nil
}

func (f *packFeed) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !f.next() {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

const (
	packOfsDelta = 6
	packRefDelta = 7
)

// parse reads a pack (version 2 or 3, SHA-1 object names) to its last object.
func (c *gitPackCheck) parse(r *packFeed) error {
	limit := c.guard.max
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return fmt.Errorf("repo %s sent a pack cut short: %w", c.guard.repo, err)
	}
	if string(hdr[:4]) != "PACK" {
		return fmt.Errorf("repo %s sent something that is not a Git pack", c.guard.repo)
	}
	count := binary.BigEndian.Uint32(hdr[8:])
	var total int64
	var zr io.ReadCloser
	for range count {
		b, err := r.ReadByte()
		if err != nil {
			return fmt.Errorf("repo %s sent a pack cut short: %w", c.guard.repo, err)
		}
		typ, size, shift := (b>>4)&7, int64(b&15), 4
		for b&0x80 != 0 {
			if b, err = r.ReadByte(); err != nil {
				return fmt.Errorf("repo %s sent a pack cut short: %w", c.guard.repo, err)
			}
			if shift > 56 {
				return c.guard.refuse(c.guard.tooLarge("holds"))
			}
			size |= int64(b&0x7f) << shift
			shift += 7
		}
		switch typ {
		case packOfsDelta: // the base's distance back: a varint
			for b = 0x80; b&0x80 != 0; {
				if b, err = r.ReadByte(); err != nil {
					return fmt.Errorf("repo %s sent a pack cut short: %w", c.guard.repo, err)
				}
			}
		case packRefDelta: // the base's name
			if _, err := io.ReadFull(r, make([]byte, 20)); err != nil {
				return fmt.Errorf("repo %s sent a pack cut short: %w", c.guard.repo, err)
			}
		}
		if size > limit {
			return c.guard.refuse(c.guard.tooLarge("holds"))
		}
		if zr == nil {
			zr, err = zlib.NewReader(r)
		} else {
			err = zr.(zlib.Resetter).Reset(r, nil)
		}
		if err != nil {
			return fmt.Errorf("repo %s sent a malformed pack: %w", c.guard.repo, err)
		}
		cnt := &inflateCount{declared: size, max: limit, delta: typ == packOfsDelta || typ == packRefDelta}
		if _, err := io.Copy(cnt, zr); err != nil {
			var ie *InputError
			switch {
			case asInput(err, &ie) || errors.Is(err, errPackObjectTooLarge):
				return c.guard.refuse(c.guard.tooLarge("holds"))
			case errors.Is(err, errPackObjectLies):
				return c.guard.refuse(&InputError{Msg: fmt.Sprintf("repo %s sent a malformed pack: an object declared %d bytes and held more", c.guard.repo, size)})
			}
			return fmt.Errorf("repo %s sent a malformed pack: %w", c.guard.repo, err)
		}
		if cnt.n != size {
			return fmt.Errorf("repo %s sent a malformed pack: an object declared %d bytes and held %d", c.guard.repo, size, cnt.n)
		}
		// What go-git holds of the object: its data, or for a delta the object it makes.
		if total += max(size, cnt.target); total > limit {
			return c.guard.refuse(c.guard.tooLarge("holds"))
		}
	}
	return nil
}

var (
	errPackObjectTooLarge = errors.New("pack object too large")
	errPackObjectLies     = errors.New("pack object larger than declared")
)

// inflateCount counts an object's inflated bytes, refusing more than its header declared, and
// reads a delta's target size (the second varint of its data), refusing one over max.
type inflateCount struct {
	n, declared, max int64
	delta            bool
	sizes            int // varints of a delta's header read so far
	v                int64
	shift            int
	target           int64
}

func (w *inflateCount) Write(p []byte) (int, error) {
	if w.n += int64(len(p)); w.n > w.declared {
		return 0, errPackObjectLies
	}
	for i := 0; w.delta && w.sizes < 2 && i < len(p); i++ {
		if w.shift > 56 {
			return 0, errPackObjectTooLarge
		}
		w.v |= int64(p[i]&0x7f) << w.shift
		w.shift += 7
		if p[i]&0x80 == 0 {
			if w.sizes++; w.sizes == 2 {
				if w.target = w.v; w.target > w.max {
					return 0, errPackObjectTooLarge
				}
			}
			w.v, w.shift = 0, 0
		}
	}
	return len(p), nil
}
