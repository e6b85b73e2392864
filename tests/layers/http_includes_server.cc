// Must NOT compile: the gateway (server/http/, vin_http) sees server/common/
// and the layers below, never the rest of server/ (ctest
// layers_the_gateway_does_not_see_the_server builds it and expects failure).
#include "server/common/log.h"
#include "server/server.h"

int GatewayLayerViolation() { return 0; }
