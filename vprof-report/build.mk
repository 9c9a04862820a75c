# vprof-report: the post-profiling analysis tool, its synthetic-run
# generator (tests and benchmarks) and its fuzz targets.
REPORT_SRC := $(filter-out vprof-report/main.c,$(wildcard vprof-report/*.c))
REPORT_OBJ := $(call objs,,$(REPORT_SRC))
REPORT_LIBS := -lgsl -lgslcblas -ldwarf -lelf -lz -lm
CFLAGS_vprof-report := -Ivprof-report

$(BIN)/vprof-report: $(REPORT_OBJ) $(OBJ)/vprof-report/main.o $(FORMAT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_TOOL) -o $@ $^ $(REPORT_LIBS)

# Test/bench helper, not installed: writes synthetic run directories.
$(BIN)/vprof-gen-runs: $(OBJ)/vprof-report/tools/vprof-gen-runs.o $(FORMAT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_TOOL) -o $@ $^ -lm

ALL_TARGETS += $(BIN)/vprof-report $(BIN)/vprof-gen-runs
INSTALL_BIN += $(BIN)/vprof-report
INSTALL_MAN += vprof-report/vprof-report.1

.PHONY: vprof-report report-fuzz
vprof-report: $(BIN)/vprof-report $(BIN)/vprof-gen-runs
