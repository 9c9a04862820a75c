# libvprof/format: the shared reader/writer module (static, PIC so that it can
# go into libvprof.so too).
FORMAT_SRC := $(wildcard libvprof/format/*.c)
FORMAT_LIB := $(LIB)/libvprof-format.a
CFLAGS_libvprof := -fPIC

$(FORMAT_LIB): $(call objs,,$(FORMAT_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(FORMAT_LIB)

-include libvprof/runtime.mk
