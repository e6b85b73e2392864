// The assembled service: engine, VinDecoderService, health, reflection, on
// one gRPC server.
#ifndef VIN_SERVER_SERVER_H_
#define VIN_SERVER_SERVER_H_

#include <memory>
#include <string>

#include <grpcpp/server.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/engine.h"
#include "server/decode_service.h"
#include "server/health_service.h"

namespace server {

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";  // port 0 picks a free port
  engine::EngineOptions engine;
  // Items of one DecodeBatch stream in progress at once; beyond it the
  // server stops reading the stream until an item's last event is written.
  int batch_window = 256;
  // Larger requests are refused by gRPC with RESOURCE_EXHAUSTED.
  int max_receive_message_bytes = 64 * 1024;
};

class VinServer {
 public:
  static absl::StatusOr<std::unique_ptr<VinServer>> Start(
      ServerOptions options);
  // Shuts down with no grace if Shutdown was not called.
  ~VinServer();

  // The bound port (useful with port 0).
  int port() const { return port_; }
  engine::Engine& engine() { return *engine_; }
  const BatchCounters& batch_counters() const {
    return decode_->batch_counters();
  }

  // Stops accepting calls and reports NOT_SERVING; lets calls in progress
  // finish for up to `grace`; then fails what remains (SHUTTING_DOWN /
  // UNAVAILABLE) and returns once every call has ended. Idempotent.
  void Shutdown(absl::Duration grace);
  // Blocks until Shutdown has completed.
  void Wait();

 private:
  VinServer() = default;

  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<DecodeService> decode_;
  std::unique_ptr<HealthService> health_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::atomic<bool> shut_down_{false};
};

}  // namespace server

#endif  // VIN_SERVER_SERVER_H_
