// Must NOT compile: vpic is below the engine, so the engine's headers are
// not visible to a target that links vpic alone (ctest
// layers_a_wrong_way_include_does_not_compile builds it and expects failure).
#include "engine/engine.h"
#include "vpic/classify.h"

int LayerViolation() { return 0; }
