# Writes OUT with the build's version: `git describe` of SRC at build time
# (a rebuild after a commit names that commit), the project version outside
# a git checkout. The file is rewritten only when its text changes, so an
# unchanged version recompiles nothing.
execute_process(COMMAND git describe --always --dirty WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE describe OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(describe)
  set(version "${PROJECT_VERSION} (${describe})")
else()
  set(version "${PROJECT_VERSION}")
endif()
set(text "#define EDGEMEM_VERSION \"${version}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
