# Enforces the layering of DESIGN.md: core/ and profiler/ are plain C++ and
# must never link a Qt module, directly or through another target.

function(_fusescope_collect_links target out_var)
  set(seen ${${out_var}})
  foreach(prop LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    get_target_property(libs ${target} ${prop})
    if(NOT libs)
      continue()
    endif()
    foreach(lib IN LISTS libs)
      # Generator expressions like $<LINK_ONLY:Qt6::Core> still name the library.
      string(REGEX REPLACE "^\\$<[A-Z_]+:(.*)>$" "\\1" lib "${lib}")
      if(lib IN_LIST seen)
        continue()
      endif()
      list(APPEND seen "${lib}")
      if(TARGET ${lib})
        _fusescope_collect_links(${lib} seen)
      endif()
    endforeach()
  endforeach()
  set(${out_var} ${seen} PARENT_SCOPE)
endfunction()

function(fusescope_assert_no_qt target)
  set(links "")
  _fusescope_collect_links(${target} links)
  foreach(lib IN LISTS links)
    if(lib MATCHES "(^|::|/|lib)Qt[0-9]*")
      message(FATAL_ERROR "Layer violation: ${target} links ${lib}. "
              "core/ and profiler/ must not depend on Qt (see DESIGN.md); "
              "move the Qt-dependent code to views/ or app/.")
    endif()
  endforeach()
endfunction()
