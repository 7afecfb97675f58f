# Compiler flags shared by every Manifold target: warnings (errors in CI), sanitizers.
set(MANIFOLD_WARNINGS -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wno-unused-parameter -Wno-missing-field-initializers)
if(MANIFOLD_WERROR)
  list(APPEND MANIFOLD_WARNINGS -Werror)
endif()
if(MANIFOLD_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# manifold_target_defaults(target): the flags and include paths of the library's own code.
function(manifold_target_defaults target)
  target_compile_options(${target} PRIVATE ${MANIFOLD_WARNINGS})
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE)
endfunction()
