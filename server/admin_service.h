// vin.v1.VinAdminService (proto/vin/v1/admin.proto; DESIGN rule 21): what
// operators read. Only for callers AdminPolicy allows (loopback with no
// tenant of their own, or --admin_tenants); others get PERMISSION_DENIED
// (ADMIN_ONLY). Without a snapshot, GetParity answers an empty report.
#ifndef VIN_SERVER_ADMIN_SERVICE_H_
#define VIN_SERVER_ADMIN_SERVICE_H_

#include "server/common/admin_access.h"
#include "server/common/tenant.h"
#include "server/parity_checker.h"
#include "vin/v1/admin.grpc.pb.h"

namespace server {

class AdminService final : public vin::v1::VinAdminService::CallbackService {
 public:
  // `parity` may be null (no snapshot loaded at start).
  AdminService(const ParityChecker* parity, TenantPolicy tenants,
               AdminPolicy admins)
      : parity_(parity),
        tenants_(std::move(tenants)),
        admins_(std::move(admins)) {}

  grpc::ServerUnaryReactor* GetParity(grpc::CallbackServerContext* context,
                                      const vin::v1::GetParityRequest* request,
                                      vin::v1::ParityReport* response) override;

 private:
  const ParityChecker* const parity_;
  const TenantPolicy tenants_;
  const AdminPolicy admins_;
};

}  // namespace server

#endif  // VIN_SERVER_ADMIN_SERVICE_H_
