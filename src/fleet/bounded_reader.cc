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

// Whether hiredis may put the object of `task` in its parent's array.
// hiredis 0.14 reads an array's length as a long long but keeps it, and
// hands it to createArray, as an int: "*4294967296" makes an array of no
// element that the parser then fills (a heap overflow). An element is made
// only where its parent has room.
bool FitsItsParent(const redisReadTask* task) {
  if (task->parent == nullptr) return true;
  const auto* parent = static_cast<const redisReply*>(task->parent->obj);
  return parent != nullptr && parent->type == REDIS_REPLY_ARRAY &&
         task->idx >= 0 && static_cast<size_t>(task->idx) < parent->elements;
}

// Refuses `task` when it is malformed or over the budget.
bool Refused(const redisReadTask* task) {
  ReplyBudget* b = BudgetOf(task);
  if (!b->exceeded && !b->malformed && !FitsItsParent(task)) {
    b->malformed = true;
  }
  return b->exceeded || b->malformed;
}

void* CreateString(const redisReadTask* task, char* str, size_t len) {
  ReplyBudget* b = BudgetOf(task);
  if (Refused(task)) return nullptr;
  if (len > kMaxReplyBytes - b->bytes) {
    b->exceeded = true;
    return nullptr;
  }
  b->bytes += len;
  return Defaults().createString(task, str, len);
}

void* CreateArray(const redisReadTask* task, int elements) {
  ReplyBudget* b = BudgetOf(task);
  if (Refused(task)) return nullptr;
  if (elements < 0) {  // a length over INT_MAX, as hiredis passes it
    b->malformed = true;
    return nullptr;
  }
  const size_t n = static_cast<size_t>(elements);
  if (n > kMaxReplyElements - b->elements) {
    b->exceeded = true;
    return nullptr;
  }
  b->elements += n;
  return Defaults().createArray(task, elements);
}

void* CreateInteger(const redisReadTask* task, long long value) {
  return Refused(task) ? nullptr : Defaults().createInteger(task, value);
}

void* CreateNil(const redisReadTask* task) {
  return Refused(task) ? nullptr : Defaults().createNil(task);
}

void FreeObject(void* reply) { Defaults().freeObject(reply); }

redisReplyObjectFunctions kBounded = {CreateString, CreateArray, CreateInteger,
                                      CreateNil, FreeObject};

}  // namespace

std::string ReplyBudget::Describe() const {
  if (malformed) {
    return "a reply whose array lengths do not fit (over INT_MAX, or more "
           "elements than announced)";
  }
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
