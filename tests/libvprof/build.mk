# Test helpers of the libvprof tests (not installed).
TESTBIN := $(BUILD)/test-bin

$(TESTBIN)/vpcheck: $(OBJ)/tests/libvprof/vpcheck.o $(FORMAT_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^

$(TESTBIN)/mkmeta: $(OBJ)/tests/libvprof/mkmeta.o $(FORMAT_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^

ALL_TARGETS += $(TESTBIN)/vpcheck $(TESTBIN)/mkmeta
libvprof: $(TESTBIN)/vpcheck $(TESTBIN)/mkmeta
