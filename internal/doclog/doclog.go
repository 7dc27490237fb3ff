// Package doclog is the one logger of packages verbs, gpunetio and docasdk,
// filtered as DOCA filters its messages: DOCA_GPUNETIO_LOG (0..8, read once;
// 8 acts as 7, anything else as 0) is the highest syslog level printed, so
// the default prints nothing. Messages go to a log/slog logger (text on
// stderr unless replaced) with the level's syslog name in the attribute
// doca_level. Package gpunetio exposes SetLogLevel and SetLogger; package
// verbs, which has no logging API of its own, prints through the same
// logger.
//
// Beside the structured output, FormatDOCA prints DOCA's own lines to an
// io.Writer (stderr by default): "<ctime date> [<LEVEL>] [<file>]: <line>:
// <function>(): <message>", the file, line and function being those of the
// library code that logged. SetFormat selects it, as does
// GPUNETIO_LOG_FORMAT=doca in the environment.
package doclog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gdaki/gpunetio/internal/docasdk"
)

// EnvLevel is the variable the level is read from.
const EnvLevel = "DOCA_GPUNETIO_LOG"

// The syslog levels DOCA numbers its messages with.
const (
	Emerg   = 0
	Alert   = 1
	Crit    = 2
	Err     = 3
	Warning = 4
	Notice  = 5
	Info    = 6
	Debug   = 7
)

var names = [...]string{"EMERG", "ALERT", "CRIT", "ERR", "WARNING", "NOTICE", "INFO", "DEBUG"}

// Name is the syslog name of a level ("ERR"), or "LogLevel(n)".
func Name(l int32) string {
	if l >= 0 && int(l) < len(names) {
		return names[l]
	}
	return "LogLevel(" + strconv.Itoa(int(l)) + ")"
}

// EnvFormat is the variable the output format is read from: "doca"
// selects FormatDOCA; anything else keeps the structured output.
const EnvFormat = "GPUNETIO_LOG_FORMAT"

// Format is how messages are printed.
type Format int32

// The output formats.
const (
	// FormatStructured sends slog records to the logger of SetLogger.
	FormatStructured Format = iota
	// FormatDOCA writes DOCA's own log lines to the writer of SetOutput.
	FormatDOCA
)

var (
	once     sync.Once
	level    atomic.Int32
	format   atomic.Int32
	loggerMu sync.Mutex
	logger   *slog.Logger
	out      io.Writer = os.Stderr // FormatDOCA's writer, under loggerMu
	now                = time.Now  // the clock of FormatDOCA's dates (tests set it)
)

// ParseLevel parses a DOCA_GPUNETIO_LOG value: 0..8 (8 acts as 7);
// anything else is 0.
func ParseLevel(v string) int32 {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 8 {
		return Emerg
	}
	if n == 8 {
		n = Debug
	}
	return int32(n)
}

func initLog() {
	once.Do(func() {
		level.Store(ParseLevel(os.Getenv(EnvLevel)))
		format.Store(int32(ParseFormat(os.Getenv(EnvFormat))))
		loggerMu.Lock()
		if logger == nil {
			logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		loggerMu.Unlock()
	})
}

func init() {
	// The SDK loader's lines (the mode decision, SDK failures) go through
	// the same logger and filter.
	docasdk.SetLogger(func(l docasdk.Level, msg string) { Print(int32(l), msg) })
}

// SetLevel replaces the level read from DOCA_GPUNETIO_LOG.
func SetLevel(l int32) {
	initLog()
	level.Store(l)
}

// Level is the current level.
func Level() int32 {
	initLog()
	return level.Load()
}

// SetLogger sends the messages to l (nil: discard them).
func SetLogger(l *slog.Logger) {
	initLog()
	loggerMu.Lock()
	logger = l
	loggerMu.Unlock()
}

// ParseFormat parses a GPUNETIO_LOG_FORMAT value: "doca" (any case) is
// FormatDOCA, anything else FormatStructured.
func ParseFormat(v string) Format {
	if strings.EqualFold(strings.TrimSpace(v), "doca") {
		return FormatDOCA
	}
	return FormatStructured
}

// SetFormat selects the output format.
func SetFormat(f Format) {
	initLog()
	format.Store(int32(f))
}

// CurrentFormat is the output format in use.
func CurrentFormat() Format {
	initLog()
	return Format(format.Load())
}

// SetOutput sets where FormatDOCA writes (nil: discard).
func SetOutput(w io.Writer) {
	initLog()
	loggerMu.Lock()
	out = w
	loggerMu.Unlock()
}

// Enabled reports whether a message of level l is printed.
func Enabled(l int32) bool {
	initLog()
	return l <= level.Load()
}

// Printf prints a formatted message of level l when the level allows it.
func Printf(l int32, format string, args ...any) {
	if !Enabled(l) {
		return
	}
	Print(l, fmt.Sprintf(format, args...))
}

// Print prints msg at level l when the level allows it.
func Print(l int32, msg string) {
	if !Enabled(l) {
		return
	}
	if Format(format.Load()) == FormatDOCA {
		printDOCA(l, msg)
		return
	}
	loggerMu.Lock()
	lg := logger
	loggerMu.Unlock()
	if lg == nil {
		return
	}
	sl := slog.LevelInfo
	switch {
	case l <= Err:
		sl = slog.LevelError
	case l == Warning:
		sl = slog.LevelWarn
	case l == Debug:
		sl = slog.LevelDebug
	}
	lg.Log(context.Background(), sl, msg, "doca_level", Name(l))
}

// ctimeLayout is C's ctime/asctime date ("Wed Apr  1 10:42:00 2026").
const ctimeLayout = "Mon Jan _2 15:04:05 2006"

// printDOCA writes msg as DOCA formats a line: date, level, source file,
// line, function.
func printDOCA(l int32, msg string) {
	file, line, fn := caller()
	s := fmt.Sprintf("%s [%s] [%s]: %d: %s(): %s\n", now().Format(ctimeLayout), Name(l), file, line, fn, msg)
	loggerMu.Lock()
	defer loggerMu.Unlock()
	if out != nil {
		_, _ = io.WriteString(out, s)
	}
}

// module is the import path prefix of this module's packages.
const module = "github.com/gdaki/gpunetio/"

// relays are the functions that only pass a message on to this package
// (the packages' own logf wrappers): the line logged is their caller's.
var relays = map[string]bool{
	module + "gpunetio.logf":         true,
	module + "verbs.logPrint":        true,
	module + "verbs.logUse":          true,
	module + "verbs.logCreated":      true,
	module + "verbs.logAllocFailed":  true,
	module + "internal/docasdk.logf": true,
	module + "internal/docasdk.emit": true,
}

// caller finds the code that logged: the first frame outside this package
// and the relays. It returns the file's base name, the line and the
// function's name without its package ("NewQPHL", "(*QPHL).Close").
func caller() (file string, line int, fn string) {
	var pcs [24]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		name := f.Function
		own := strings.HasPrefix(name, module+"internal/doclog.") && !strings.HasSuffix(f.File, "_test.go")
		if !own && !relays[name] {
			short := name[strings.LastIndex(name, "/")+1:]
			if i := strings.IndexByte(short, '.'); i >= 0 {
				short = short[i+1:]
			}
			return filepath.Base(f.File), f.Line, short
		}
		if !more {
			return "?", 0, "?"
		}
	}
}
