// hiredis's RESP reader with every reply bounded (rule 19: nothing read
// from Redis is trusted, nor what answers in its place). hiredis 0.14
// bounds none of it: "*N" allocates N pointers at once, and a reply of
// many small elements costs some 50 bytes of objects for every 4 bytes
// sent, so a bound on the bytes not yet parsed (kMaxBufferedReply) does
// not bound the memory of one reply. Here the reply's objects are made by
// hiredis's own functions, counted first: more than kMaxReplyElements
// elements or kMaxReplyBytes of strings in one reply, and the reader
// fails (as hiredis fails out of memory) with `budget->exceeded` set. An
// array length over INT_MAX (hiredis 0.14 keeps it as an int: "*4294967296"
// would be an array of no element, then filled) fails the same way, with
// `budget->malformed` set.
#ifndef VIN_FLEET_BOUNDED_READER_H_
#define VIN_FLEET_BOUNDED_READER_H_

#include <cstddef>
#include <string>

struct redisReader;

namespace fleet {

// Far above any reply of ours (a budget script's few values, one cached
// result of at most 1 MiB).
// (65,536 elements cost some 8 MB of hiredis objects and our copies.)
inline constexpr size_t kMaxReplyElements = size_t{1} << 16;
inline constexpr size_t kMaxReplyBytes = size_t{64} << 20;

// What the reply being parsed has used so far. Reset it when a reply is
// complete.
struct ReplyBudget {
  size_t elements = 0;
  size_t bytes = 0;
  bool exceeded = false;
  bool malformed = false;  // an array length hiredis would mishandle
  // What was exceeded, for the error.
  std::string Describe() const;
};

// A reader (free with redisReaderFree) that counts into `budget`, which
// must outlive it.
redisReader* CreateBoundedReader(ReplyBudget* budget);

}  // namespace fleet

#endif  // VIN_FLEET_BOUNDED_READER_H_
