# Compiles SOURCE twice with the project's include flags: with -DEMBER_FIXED it must compile (the
# case is otherwise valid code), without it it must fail with an error line containing EXPECT.
#   cmake -DCXX=... -DINCLUDES="a|b" -DSOURCE=... -DEXPECT=... -P check_compile_error.cmake
string(REPLACE "|" ";" include_dirs "${INCLUDES}")
set(flags -std=c++20 -fsyntax-only)
foreach(dir ${include_dirs})
  list(APPEND flags "-I${dir}")
endforeach()

execute_process(COMMAND ${CXX} ${flags} -DEMBER_FIXED ${SOURCE}
  RESULT_VARIABLE fixed_rc OUTPUT_VARIABLE fixed_out ERROR_VARIABLE fixed_out)
if(NOT fixed_rc EQUAL 0)
  message(FATAL_ERROR "the corrected case does not compile:\n${fixed_out}")
endif()

execute_process(COMMAND ${CXX} ${flags} ${SOURCE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "the mistake compiled; expected an error saying: ${EXPECT}")
endif()
string(REGEX MATCHALL "error: [^\n]*" errors "${out}")
list(LENGTH errors n_errors)
set(found FALSE)
foreach(line ${errors})
  string(FIND "${line}" "${EXPECT}" at)
  if(NOT at EQUAL -1)
    set(found TRUE)
  endif()
endforeach()
if(NOT found)
  message(FATAL_ERROR "no error line says \"${EXPECT}\"; the compiler said:\n${out}")
endif()
message(STATUS "${n_errors} error line(s), one saying: ${EXPECT}")
