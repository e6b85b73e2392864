// The Lua scripts of the fleet's job store (fleet/redis_job_store.h), each
// atomic in Redis. Keys and arguments are listed above each in the .cc.
#ifndef VIN_FLEET_REDIS_JOB_SCRIPTS_H_
#define VIN_FLEET_REDIS_JOB_SCRIPTS_H_

namespace fleet {
namespace job_scripts {

extern const char kBegin[];
extern const char kAddItems[];
extern const char kPublish[];
extern const char kDrop[];
extern const char kPending[];
extern const char kCommit[];
extern const char kNotify[];
extern const char kCancel[];
extern const char kResults[];
extern const char kHold[];

}  // namespace job_scripts
}  // namespace fleet

#endif  // VIN_FLEET_REDIS_JOB_SCRIPTS_H_
