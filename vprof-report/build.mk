# vprof-report: the post-profiling analysis tool, its synthetic-run
# generator (tests and benchmarks) and its fuzz targets.
REPORT_SRC := $(filter-out vprof-report/main.c,$(wildcard vprof-report/*.c))
# dwarf-meta's DIE ranges reader (ranges.c) and DIE helpers (dwutil.c)
# serve lines.c's inlined code too: one reader of DW_AT_ranges/rnglists and
# of abstract origins.
REPORT_OBJ := $(call objs,,$(REPORT_SRC)) $(OBJ)/dwarf-meta/ranges.o $(OBJ)/dwarf-meta/dwutil.o
REPORT_LIBS := -lgsl -lgslcblas -ldwarf -lelf -lz -lm -liberty
CFLAGS_vprof-report := -Ivprof-report -Idwarf-meta

$(BIN)/vprof-report: $(REPORT_OBJ) $(OBJ)/vprof-report/main.o $(FORMAT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_TOOL) -o $@ $^ $(REPORT_LIBS)

# Test/bench helper, not installed: writes synthetic run directories.
$(BIN)/vprof-gen-runs: $(OBJ)/vprof-report/tools/vprof-gen-runs.o $(FORMAT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_TOOL) -o $@ $^ -lelf -lm

ALL_TARGETS += $(BIN)/vprof-report $(BIN)/vprof-gen-runs
INSTALL_BIN += $(BIN)/vprof-report
INSTALL_MAN += vprof-report/vprof-report.1

.PHONY: vprof-report report-fuzz
vprof-report: $(BIN)/vprof-report $(BIN)/vprof-gen-runs

# Fuzz targets (libFuzzer, clang 14): every reader of the format module and
# vprof-report's own ELF/DWARF/number readers. `make report-fuzz` builds
# $(BUILD)/fuzz/fuzz_*; tests/report/t_fuzz_corpus.sh runs the kept corpus
# (vprof-report/fuzz/corpus/<target>/) through them under ASan/UBSan.
FUZZ_CC := $(CLANG)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := $(FUZZ_SAN) -fsanitize=fuzzer-no-link -g -O1 -std=c11 -D_GNU_SOURCE \
               -Ilibvprof/format -Ivprof-report -Idwarf-meta
FUZZ_TARGETS := $(patsubst vprof-report/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard vprof-report/fuzz/fuzz_*.c))
FUZZ_LIB_SRC := $(FORMAT_SRC) $(FORMAT_OFFLINE_SRC) $(REPORT_SRC) dwarf-meta/ranges.c dwarf-meta/dwutil.c
FUZZ_LIB_OBJ := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(FUZZ_LIB_SRC))

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/fuzz/%: vprof-report/fuzz/%.c $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJ) $(REPORT_LIBS)

report-fuzz: $(FUZZ_TARGETS)
