#include "fleet/bounded_reader.h"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include "absl/strings/str_cat.h"

namespace fleet {
namespace {

// hiredis's own object functions (its static defaultFunctions, which every
// reader it creates points to).
const redisReplyObjectFunctions& Defaults() {
  static const redisReplyObjectFunctions* const fn = [] {
    redisReader* r = redisReaderCreate();
    const redisReplyObjectFunctions* f = r->fn;
    redisReaderFree(r);
    return f;
  }();
  return *fn;
}

ReplyBudget* BudgetOf(const redisReadTask* task) {
  return static_cast<ReplyBudget*>(task->privdata);
}

void* CreateString(const redisReadTask* task, char* str, size_t len) {
  ReplyBudget* b = BudgetOf(task);
  if (b->exceeded || len > kMaxReplyBytes - b->bytes) {
    b->exceeded = true;
    return nullptr;
  }
  b->bytes += len;
  return Defaults().createString(task, str, len);
}

void* CreateArray(const redisReadTask* task, int elements) {
  ReplyBudget* b = BudgetOf(task);
  const size_t n = elements > 0 ? static_cast<size_t>(elements) : 0;
  if (b->exceeded || n > kMaxReplyElements - b->elements) {
    b->exceeded = true;
    return nullptr;
  }
  b->elements += n;
  return Defaults().createArray(task, elements);
}

void* CreateInteger(const redisReadTask* task, long long value) {
  return Defaults().createInteger(task, value);
}

void* CreateNil(const redisReadTask* task) { return Defaults().createNil(task); }

void FreeObject(void* reply) { Defaults().freeObject(reply); }

redisReplyObjectFunctions kBounded = {CreateString, CreateArray, CreateInteger,
                                      CreateNil, FreeObject};

}  // namespace

std::string ReplyBudget::Describe() const {
  return absl::StrCat("a reply of more than ", kMaxReplyElements,
                      " elements or ", kMaxReplyBytes >> 20,
                      " MiB of strings (", elements, " elements and ", bytes,
                      " bytes when it was dropped)");
}

redisReader* CreateBoundedReader(ReplyBudget* budget) {
  redisReader* r = redisReaderCreateWithFunctions(&kBounded);
  if (r != nullptr) r->privdata = budget;
  return r;
}

}  // namespace fleet
