// Must NOT compile: server/common/ (vin_server_common) is below the gateway
// (ctest layers_server_common_does_not_see_the_gateway expects failure).
#include "server/http/gateway.h"

int CommonLayerViolation() { return 0; }
