#include "server/admin_service.h"

#include "server/common/trusted_proxies.h"

namespace server {

grpc::ServerUnaryReactor* AdminService::GetParity(
    grpc::CallbackServerContext* context, const vin::v1::GetParityRequest*,
    vin::v1::ParityReport* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const std::string peer = TrustedProxies::AddressOfGrpcPeer(context->peer());
  if (!admins_.Allows(peer, tenants_.TenantOf(*context))) {
    reactor->Finish(ToGrpcStatus(AdminRefusal("GetParity")));
    return reactor;
  }
  if (parity_ != nullptr) *response = parity_->Report();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace server
