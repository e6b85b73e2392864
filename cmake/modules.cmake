# The modules of src/: one library each, over its own directory (included by
# CMakeLists.txt once vin_proto exists).
#
# A module is reached through an include root of its own, which holds only
# that module (build/modules/<m>/<m> -> src/<m>): a target sees the headers
# of exactly the modules it links (directly, or through a module whose
# headers include them: PUBLIC), so a wrong-way include does not compile.
# server/ and client/ are reached the same way (build/modules/server/server,
# build/modules/client/client), never through the repository's root.
# The layers, lowest first (docs/DESIGN.md "Architecture"; the table the
# layer tests check is VIN_LAYERS, in cmake/layers.cmake):
#   domain, vin, clocks, metrics, util -> retry, disk_cache -> loop, coalesce
#   -> vpic, upstream -> snapshot, engine_api -> engine, fleet
#   -> server/, client/
# (disk_cache, the store behind the result cache, uses only the clock and
# util's private files; fleet sees engine_api, not the engine.)
function(vin_include_root target name dir)
  set(root ${CMAKE_BINARY_DIR}/modules/${name})
  file(MAKE_DIRECTORY ${root})
  if(NOT EXISTS ${root}/${name})
    file(CREATE_LINK ${dir} ${root}/${name} SYMBOLIC)
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${root})
  else()
    target_include_directories(${target} PUBLIC ${root})
  endif()
endfunction()

# vin_module(NAME PUBLIC deps... PRIVATE deps...): library vin_NAME of
# src/NAME/*.cc (an INTERFACE library when it has headers only).
function(vin_module name)
  cmake_parse_arguments(M "" "" "PUBLIC;PRIVATE" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${name}/*.cc)
  if(sources)
    add_library(vin_${name} STATIC ${sources})
    target_link_libraries(vin_${name} PUBLIC ${M_PUBLIC} PRIVATE ${M_PRIVATE})
  else()
    add_library(vin_${name} INTERFACE)
    target_link_libraries(vin_${name} INTERFACE ${M_PUBLIC})
  endif()
  vin_include_root(vin_${name} ${name} ${CMAKE_SOURCE_DIR}/src/${name})
  # What the module's own files see: its target, and the modules it links
  # privately (the layer tests compile in that context).
  list(FILTER M_PRIVATE INCLUDE REGEX "^vin_")
  set_property(GLOBAL PROPERTY VIN_LAYER_CONTEXT_${name} vin_${name} ${M_PRIVATE})
endfunction()

vin_module(domain PUBLIC absl::status absl::strings absl::time absl::optional)
vin_module(vin PUBLIC absl::status absl::statusor absl::strings)
# The clock every module below the engine reads (monotonic and calendar).
vin_module(clocks PUBLIC absl::time absl::synchronization)
vin_module(retry PUBLIC vin_clocks absl::time absl::synchronization
  absl::flat_hash_map absl::random_random absl::function_ref)
vin_module(metrics PUBLIC absl::time absl::synchronization absl::strings)
vin_module(util PUBLIC absl::status absl::statusor absl::strings)
# The crash-safe store of finished decodes (DESIGN rule 14).
vin_module(disk_cache PUBLIC vin_clocks absl::status absl::statusor absl::strings
  absl::time absl::optional absl::synchronization absl::flat_hash_set
  PRIVATE vin_util SQLite::SQLite3 ZLIB::ZLIB Threads::Threads)
# Feeds as vinctl reads and writes them (CSV, plain lists, the result
# columns): vinctl's batch and job commands, and the gateway's CSV jobs.
vin_module(feed PUBLIC vin_proto absl::status absl::statusor absl::strings
  absl::optional PRIVATE nlohmann_json::nlohmann_json)
# Rule 20's job store: SQLite through the disk cache's store file code.
vin_module(jobs PUBLIC absl::status absl::statusor absl::strings
  absl::time absl::synchronization
  PRIVATE vin_disk_cache SQLite::SQLite3 OpenSSL::Crypto)
vin_module(loop PUBLIC vin_retry absl::status absl::statusor absl::synchronization
  absl::flat_hash_map Threads::Threads)
vin_module(coalesce PUBLIC vin_domain absl::btree absl::flat_hash_map absl::hash)
vin_module(vpic PUBLIC vin_domain vin_loop absl::str_format absl::optional
  CURL::libcurl PRIVATE simdjson::simdjson)
vin_module(upstream PUBLIC vin_coalesce vin_domain absl::time absl::optional absl::btree
  absl::random_random)
vin_module(snapshot PUBLIC vin_vin vin_vpic absl::flat_hash_map absl::flat_hash_set
  PRIVATE vin_util SQLite::SQLite3 OpenSSL::Crypto)
# What the engine tells its callers and asks of a fleet (types.h,
# fleet_backend.h): the one part of the engine the fleet may see.
vin_module(engine_api PUBLIC vin_domain vin_vin vin_vpic vin_loop vin_upstream
  absl::time absl::optional absl::strings)
vin_module(engine PUBLIC vin_engine_api vin_domain vin_vin vin_vpic vin_retry
  vin_loop vin_coalesce vin_upstream vin_snapshot vin_metrics vin_disk_cache)
# Fleet mode on Redis (src/fleet/): implements engine_api's FleetBackend,
# and the jobs' store of a fleet (jobs::JobStore).
vin_module(fleet PUBLIC vin_engine_api vin_upstream vin_loop vin_domain vin_jobs vin_proto
  PkgConfig::HIREDIS absl::status absl::statusor absl::strings absl::str_format
  absl::time absl::optional absl::flat_hash_set absl::random_random
  PRIVATE vin_util OpenSSL::SSL OpenSSL::Crypto)

# The engine and every module it links (all of src/ but fleet and util), for
# tests and benchmarks.
add_library(vin_core INTERFACE)
target_link_libraries(vin_core INTERFACE vin_engine)
