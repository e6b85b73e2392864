// Must compile: vpic may use the modules below it (the control for
// layers_a_wrong_way_include_does_not_compile).
#include "domain/failure.h"
#include "vpic/classify.h"

int LayerAllowed() { return 0; }
