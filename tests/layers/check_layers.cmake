# cmake -DBUILD_DIR=<build> -DMODULE=<m> -DEDGES=<other=header,...>
#       -P check_layers.cmake
# The ctest layers_<m> (cmake/layers.cmake made its targets): the module's
# allowed file compiles, and each forbidden edge's file fails because the
# other module's header is not found. Prints one line per edge.
string(REPLACE "," ";" edges "${EDGES}")

execute_process(
  COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target layers_${MODULE}_allowed
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR
    "${MODULE}: the modules its row allows do not compile:\n${out}")
endif()
message(STATUS "${MODULE}: its own header and the modules it uses compile")

if(NOT edges)
  return()
endif()
set(targets)
foreach(edge IN LISTS edges)
  string(REGEX REPLACE "=.*" "" other "${edge}")
  list(APPEND targets layers_${MODULE}_includes_${other})
endforeach()
# One build of every edge's file; -k 0 goes on past each failure.
execute_process(
  COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${targets} -- -k 0
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)

set(compiled)
foreach(edge IN LISTS edges)
  string(REGEX REPLACE "=.*" "" other "${edge}")
  string(REGEX REPLACE ".*=" "" header "${edge}")
  string(REPLACE "." "\\." file_re "${MODULE}_includes_${other}.cc")
  string(REPLACE "." "\\." header_re "${header}")
  if(out MATCHES "${file_re}:[0-9]+:[0-9]+: fatal error: ${header_re}: No such file or directory")
    message(STATUS "${MODULE} -> ${other}: refused (${header} not found)")
  else()
    message(STATUS "${MODULE} -> ${other}: NOT refused")
    list(APPEND compiled ${other})
  endif()
endforeach()
if(compiled)
  message(FATAL_ERROR "${MODULE} can include what DESIGN forbids it: "
    "${compiled}\n${out}")
endif()
