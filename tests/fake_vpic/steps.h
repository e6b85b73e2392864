// How the fake vPIC plays a scripted step. Internal to the fake.
#ifndef FAKE_VPIC_STEPS_H_
#define FAKE_VPIC_STEPS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "fake_vpic/fake_vpic.h"

namespace fakevpic {

// What RequestRecord::served says of a step: "ok", "503", "429", "reset"...
std::string ServedName(const Step& step);
// Whether a step fails the whole HTTP answer (rather than one VIN of it).
bool FailsWholeAnswer(Step::Kind kind);
// The answer of a step that fails the whole answer and is written as one
// (status, 429, html, truncated, empty); `normal` and `empty` are the
// request's normal and empty-results bodies.
std::string FaultAnswer(const Step& step, bool close, absl::string_view normal,
                        absl::string_view empty);

}  // namespace fakevpic

#endif  // FAKE_VPIC_STEPS_H_
