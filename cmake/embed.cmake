# cmake -DIN=<file> -DOUT=<file.cc> -DNAME=<symbol> -P embed.cmake
# Writes OUT defining `extern const char NAME[]` (in namespace
# server::http::embedded) holding IN's bytes, for files served as they are
# (the page, the OpenAPI description).
file(READ ${IN} content)
string(FIND "${content}" ")vin_embedded\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} holds the raw string's delimiter")
endif()
file(WRITE ${OUT}.tmp
  "// Generated from ${IN} by cmake/embed.cmake.\n"
  "namespace server::http::embedded {\n"
  "extern const char ${NAME}[];\n"
  "const char ${NAME}[] = R\"vin_embedded(${content})vin_embedded\";\n"
  "}  // namespace server::http::embedded\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
