# attnlab_attention_bench: the attention bench (latency, memory and MACs of a mechanism
# against softmax) as a library of its own, so that the session library and the GPU check
# (bench/gpu_check) link one compiled copy. Included by app/session/CMakeLists.txt and, in
# a GPU-check-only build where app/ is not configured, by bench/gpu_check/CMakeLists.txt.
add_library(attnlab_attention_bench STATIC ${PROJECT_SOURCE_DIR}/app/session/attention_bench.cpp)
target_include_directories(attnlab_attention_bench PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(attnlab_attention_bench PUBLIC attnlab_models attnlab_core)
attnlab_torch_pch(attnlab_attention_bench)
attnlab_warnings(attnlab_attention_bench)
