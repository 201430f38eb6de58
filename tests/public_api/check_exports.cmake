# Fails when LIBRARY (libnxrt) exports a symbol of an internal namespace:
# the executor, kernel cache, plugin host, partitioner, session state,
# device graphs, or the graph layer's inference, loader and rewrites.
execute_process(COMMAND ${NM} -D --defined-only -C ${LIBRARY}
                OUTPUT_VARIABLE symbols RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "${NM} could not read ${LIBRARY}")
endif()
# A symbol is named by its own namespace; an exported class's private
# members may still mention internal types in their signatures.
string(REGEX MATCHALL
  "\n[0-9a-f]+ [A-Za-z] (typeinfo for |typeinfo name for |vtable for )?nxrt::(executor|kernel_cache|plugin_host|partitioner|session|device_graph|graph::inference|graph::loader|graph::rewrite)::[^\n]*"
  internal "\n${symbols}")
list(LENGTH internal count)
if(count GREATER 0)
  list(GET internal 0 first)
  message(FATAL_ERROR "${LIBRARY} exports ${count} internal symbols, e.g. ${first}")
endif()
string(REGEX MATCHALL "\n[0-9a-f]+ [TW] nxrt::" exported "${symbols}")
list(LENGTH exported exported_count)
message(STATUS "${LIBRARY} exports ${exported_count} nxrt functions, none internal")
