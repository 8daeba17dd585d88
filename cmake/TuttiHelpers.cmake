# tutti_component(NAME SOURCES... DEPS ...): a component library with its public include/ dir.
function(tutti_component name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(tutti_${name} STATIC ${ARG_SOURCES})
  target_include_directories(tutti_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(tutti_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  target_compile_definitions(tutti_${name} PRIVATE TUTTI_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
endfunction()

# tutti_test(COMPONENT SOURCES... DEPS ...): one doctest executable per component; every
# TEST_CASE becomes a ctest test (labelled with the component). A test that prints "tutti-skip:"
# (e.g. MESSAGE("tutti-skip: chromium not found")) is reported by ctest as skipped.
include(${doctest_DIR}/doctest.cmake OPTIONAL RESULT_VARIABLE _doctest_cmake)
function(tutti_test component)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  set(exe test_${component})
  add_executable(${exe} ${CMAKE_SOURCE_DIR}/tests/doctest_main.cpp ${ARG_SOURCES})
  target_link_libraries(${exe} PRIVATE ${ARG_DEPS} doctest::doctest)
  target_compile_definitions(${exe} PRIVATE TUTTI_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
                                            TUTTI_BINARY_DIR="${CMAKE_BINARY_DIR}")
  set_target_properties(${exe} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  doctest_discover_tests(${exe} TEST_PREFIX "${component}: "
                         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                         PROPERTIES LABELS "${component};${ARG_LABELS}"
                                    SKIP_REGULAR_EXPRESSION "tutti-skip:")
endfunction()

# tutti_embed_files(OUT FILES... NAMESPACE ns FUNCTION fn HEADER h): generates OUT, a C++ file
# that defines `ns::fn()` (declared in header h) returning each of FILES as (file name, text)
# (cmake/embed_files.cmake). A library lists OUT among its sources; used for the result schemas
# each result's owning library checks its documents against.
function(tutti_embed_files out)
  cmake_parse_arguments(ARG "" "NAMESPACE;FUNCTION;HEADER" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} "-DOUT=${out}" "-DFILES=${ARG_FILES}" -DNAMESPACE=${ARG_NAMESPACE}
            -DFUNCTION=${ARG_FUNCTION} -DHEADER=${ARG_HEADER}
            -P ${CMAKE_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${ARG_FILES} ${CMAKE_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding ${ARG_FILES}"
    VERBATIM)
endfunction()
