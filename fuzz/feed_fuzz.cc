// vinctl's input on any bytes: the feed reader ends (records or a clear
// error) without crashing, and a CSV record survives formatting and parsing.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "feed/csv.h"
#include "feed/feed.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  auto reader = feed::FeedReader::Open(&in);
  if (reader.ok()) {
    for (int i = 0; i < 100000; ++i) {
      auto next = (*reader)->Next();
      if (!next.ok() || !next->has_value()) break;
      if ((**next).fields.size() < (*reader)->columns().size()) __builtin_trap();
    }
  }
  auto fields = feed::ParseCsvRecord(text);
  if (fields.ok()) {
    auto again = feed::ParseCsvRecord(feed::FormatCsvRecord(*fields));
    if (!again.ok() || *again != *fields) __builtin_trap();
  }
  return 0;
}
