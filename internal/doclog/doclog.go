// Package doclog is the one logger of packages verbs, gpunetio and docasdk,
// filtered as DOCA filters its messages: DOCA_GPUNETIO_LOG (0..8, read once;
// 8 acts as 7, anything else as 0) is the highest syslog level printed, so
// the default prints nothing. Messages go to a log/slog logger (text on
// stderr unless replaced) with the level's syslog name in the attribute
// doca_level. Package gpunetio exposes SetLogLevel and SetLogger; package
// verbs, which has no logging API of its own, prints through the same
// logger.
package doclog

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

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

var (
	once     sync.Once
	level    atomic.Int32
	loggerMu sync.Mutex
	logger   *slog.Logger
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
