// The window of a stream of items, whatever carries it (a DecodeBatch
// call, the gateway's NDJSON stream): at most `size` items are open,
// an item being open from when it is read until its terminal event has
// been written (or dropped, its reader gone). While the window is full
// the stream reads no more, so the sender is slowed by its own reading
// and memory stays bounded (DESIGN rule 19). Not thread-safe: its owner
// serialises the calls (a mutex, a strand).
#ifndef VIN_SERVER_COMMON_ITEM_WINDOW_H_
#define VIN_SERVER_COMMON_ITEM_WINDOW_H_

#include <cstddef>
#include <cstdint>

namespace server {

class ItemWindow {
 public:
  explicit ItemWindow(size_t size) : size_(size) {}

  // Whether another item may be read.
  bool HasRoom() const { return open_ < size_; }

  // An item was read: it takes a place; returns its 0-based index.
  uint64_t Open() {
    ++open_;
    return next_index_++;
  }
  // Its terminal event is queued for writing.
  void TerminalQueued() { ++terminals_queued_; }
  // Its terminal event left the queue (written, or dropped): its place is
  // free. `was_queued`: it had been counted by TerminalQueued.
  void Close(bool was_queued) {
    --open_;
    if (was_queued) --terminals_queued_;
  }

  // Held by its reader: full, no read out, and every open item answered,
  // the answers waiting for the client to take them.
  bool HeldByReader(bool read_out) const {
    return !read_out && !HasRoom() && terminals_queued_ == open_;
  }

  size_t open() const { return open_; }
  uint64_t items_read() const { return next_index_; }

 private:
  const size_t size_;
  size_t open_ = 0;
  size_t terminals_queued_ = 0;
  uint64_t next_index_ = 0;
};

}  // namespace server

#endif  // VIN_SERVER_COMMON_ITEM_WINDOW_H_
