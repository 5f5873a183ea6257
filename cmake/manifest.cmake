# The operator manifest, ops/manifest.json, read at configure time (string(JSON)); a
# change to it re-runs CMake. From it:
# - include/operator_runtime/operator_runtime.h in the build tree (and installed): the
#   umbrella header, api.h and every operator's ops/<op>.h, from cmake/operator_runtime.h.in;
# - generated/tests/cpp/op_table.inc: one OPRT_TEST_OP(...) row per operator, the C++ test
#   table that tests/cpp/test_support.h expands into OpKind and all_ops().
# Python reads the same file at run time (python/operator_runtime/_manifest.py).
set(CAMP_MANIFEST ${PROJECT_SOURCE_DIR}/ops/manifest.json)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CAMP_MANIFEST})
file(READ ${CAMP_MANIFEST} _camp_manifest)

# "a, b, c" of a JSON list of strings at ops[i].<key>, each wrapped as PREFIX<value>SUFFIX.
function(_camp_manifest_list out i key prefix suffix)
  string(JSON _n LENGTH "${_camp_manifest}" ops ${i} ${key})
  set(_items "")
  if(_n GREATER 0)
    math(EXPR _last "${_n} - 1")
    foreach(j RANGE ${_last})
      string(JSON _v GET "${_camp_manifest}" ops ${i} ${key} ${j})
      list(APPEND _items "${prefix}${_v}${suffix}")
    endforeach()
  endif()
  list(JOIN _items ", " _joined)
  set(${out} "${_joined}" PARENT_SCOPE)
endfunction()

string(JSON _camp_op_count LENGTH "${_camp_manifest}" ops)
math(EXPR _camp_op_last "${_camp_op_count} - 1")
set(CAMP_OPS "")
set(CAMP_OP_INCLUDES "")
set(_camp_op_rows "")
foreach(i RANGE ${_camp_op_last})
  string(JSON name GET "${_camp_manifest}" ops ${i} name)
  string(JSON kind GET "${_camp_manifest}" ops ${i} kind)
  string(JSON output GET "${_camp_manifest}" ops ${i} output)
  string(JSON num_inputs LENGTH "${_camp_manifest}" ops ${i} inputs)
  string(JSON num_params LENGTH "${_camp_manifest}" ops ${i} params)
  if(NOT name MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "${CAMP_MANIFEST}: operator name '${name}' is not lower_case")
  endif()
  list(APPEND CAMP_OPS ${name})
  string(APPEND CAMP_OP_INCLUDES "#include \"operator_runtime/ops/${name}.h\"\n")

  # The C++ test table: CamelCase for OpKind, what the kind means for the shared tests,
  # the create call's arguments (an int64_t parameter is the table's axis, a float its
  # scalar) and the execute call's inputs.
  string(REPLACE "_" ";" _parts ${name})
  set(camel "")
  foreach(part IN LISTS _parts)
    string(SUBSTRING ${part} 0 1 _first)
    string(SUBSTRING ${part} 1 -1 _rest)
    string(TOUPPER ${_first} _first)
    string(APPEND camel "${_first}${_rest}")
  endforeach()
  if(kind STREQUAL "elementwise")
    set(flags "true, false, false")
  elseif(kind STREQUAL "reduction")
    set(flags "false, true, false")
  elseif(kind STREQUAL "normalization")
    set(flags "false, false, false")
  elseif(kind STREQUAL "matmul")
    set(flags "false, false, true")
  else()
    message(FATAL_ERROR "${CAMP_MANIFEST}: ${name} has kind '${kind}' "
                        "(elementwise, reduction, normalization or matmul)")
  endif()
  if(num_inputs LESS 1 OR num_inputs GREATER 2)
    message(FATAL_ERROR "${CAMP_MANIFEST}: ${name} has ${num_inputs} inputs; "
                        "the C++ test table takes 1 or 2")
  endif()
  _camp_manifest_list(arg_names ${i} inputs "\"" "\"")
  if(num_inputs EQUAL 1)
    set(arg_names "\"${output}\", ${arg_names}, nullptr")
    set(create_args "d, o, i0")
    set(execute_args "i0")
  else()
    set(arg_names "\"${output}\", ${arg_names}")
    set(create_args "d, o, i0, i1")
    set(execute_args "i0, i1")
  endif()
  set(_seen "")
  if(num_params GREATER 0)
    math(EXPR _plast "${num_params} - 1")
    foreach(j RANGE ${_plast})
      string(JSON ctype GET "${_camp_manifest}" ops ${i} params ${j} c_type)
      if(ctype STREQUAL "int64_t")
        set(_arg axis)
      elseif(ctype STREQUAL "float")
        set(_arg scalar)
      else()
        message(FATAL_ERROR "${CAMP_MANIFEST}: ${name} has a parameter of C type '${ctype}'; "
                            "the C++ test table passes int64_t (the axis) and float")
      endif()
      if(_arg IN_LIST _seen)
        message(FATAL_ERROR "${CAMP_MANIFEST}: ${name} has two ${ctype} parameters; "
                            "the C++ test table passes one of each")
      endif()
      list(APPEND _seen ${_arg})
      string(APPEND create_args ", ${_arg}")
    endforeach()
  endif()
  string(APPEND _camp_op_rows
    "OPRT_TEST_OP(${camel}, ${name}, ${num_inputs}, (${arg_names}), ${flags}, "
    "(${create_args}), (${execute_args}))\n")
endforeach()

configure_file(${PROJECT_SOURCE_DIR}/cmake/operator_runtime.h.in
               ${PROJECT_BINARY_DIR}/include/operator_runtime/operator_runtime.h @ONLY)
set(CAMP_TEST_OP_ROWS "${_camp_op_rows}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/op_table.inc.in
               ${PROJECT_BINARY_DIR}/generated/tests/cpp/op_table.inc @ONLY)
message(STATUS "Operators (ops/manifest.json): ${CAMP_OPS}")
