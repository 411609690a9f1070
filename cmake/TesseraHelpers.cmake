# tessera_library(NAME SOURCES ... HEADERS ... DEPS ...)
# Defines library target `tessera_NAME` (alias Tessera::NAME), exported for
# find_package(Tessera) and installing its public headers under include/tessera/<dir>.
# -Wno-missing-field-initializers: designated initializers (Tensor{.name = ...})
# leave members at their defaults on purpose.
function(tessera_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;HEADERS;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target tessera_${name})
  if(ARG_SOURCES)
    add_library(${target} ${ARG_SOURCES})
    set(scope PUBLIC)
  else()
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  endif()
  add_library(Tessera::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${TESSERA_BUILD_INCLUDE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} ${scope} cxx_std_20)
  if(ARG_DEPS)
    target_link_libraries(${target} ${scope} ${ARG_DEPS})
  endif()
  if(ARG_PRIVATE_DEPS)
    target_link_libraries(${target} PRIVATE ${ARG_PRIVATE_DEPS})
  endif()
  if(ARG_SOURCES)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers>)
  endif()
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  foreach(h IN LISTS ARG_HEADERS)
    get_filename_component(sub ${h} DIRECTORY)
    install(FILES ${h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera/${rel}/${sub})
  endforeach()
  install(TARGETS ${target} EXPORT TesseraTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()

# tessera_module(NAME [SUBDIRS dir...] DEPS ...)
# A module folder as one library: every .cc of the folder (and of SUBDIRS) is a
# source, every .h a public header except internal *_impl.h. No target while the
# folder has no sources yet.
function(tessera_module name)
  cmake_parse_arguments(ARG "" "" "SUBDIRS;DEPS" ${ARGN})
  set(dirs ${CMAKE_CURRENT_SOURCE_DIR})
  foreach(sub IN LISTS ARG_SUBDIRS)
    list(APPEND dirs ${CMAKE_CURRENT_SOURCE_DIR}/${sub})
  endforeach()
  set(sources)
  set(headers)
  foreach(dir IN LISTS dirs)
    file(GLOB dir_sources CONFIGURE_DEPENDS ${dir}/*.cc)
    file(GLOB dir_headers CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${dir}/*.h)
    list(APPEND sources ${dir_sources})
    list(APPEND headers ${dir_headers})
  endforeach()
  list(FILTER headers EXCLUDE REGEX "_impl\\.h$")
  if(sources)
    tessera_library(${name} SOURCES ${sources} HEADERS ${headers} DEPS ${ARG_DEPS})
  endif()
endfunction()
