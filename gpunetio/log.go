package gpunetio

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

// LogLevel is a syslog-numbered level, as DOCA_GPUNETIO_LOG uses them.
type LogLevel int32

const (
	LogEmerg   LogLevel = 0
	LogAlert   LogLevel = 1
	LogCrit    LogLevel = 2
	LogErr     LogLevel = 3
	LogWarning LogLevel = 4
	LogNotice  LogLevel = 5
	LogInfo    LogLevel = 6
	LogDebug   LogLevel = 7
)

var levelNames = [...]string{"EMERG", "ALERT", "CRIT", "ERR", "WARNING", "NOTICE", "INFO", "DEBUG"}

func (l LogLevel) String() string {
	if l >= 0 && int(l) < len(levelNames) {
		return levelNames[l]
	}
	return "LogLevel(" + strconv.Itoa(int(l)) + ")"
}

var (
	logOnce  sync.Once
	logLevel atomic.Int32
	loggerMu sync.Mutex
	logger   *slog.Logger
)

// logLevelFromEnv parses DOCA_GPUNETIO_LOG: 0..8 (8 acts as 7); anything else is 0.
func logLevelFromEnv(v string) LogLevel {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 8 {
		return LogEmerg
	}
	if n == 8 {
		n = 7
	}
	return LogLevel(n)
}

func initLog() {
	logOnce.Do(func() {
		logLevel.Store(int32(logLevelFromEnv(os.Getenv("DOCA_GPUNETIO_LOG"))))
		loggerMu.Lock()
		if logger == nil {
			logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		loggerMu.Unlock()
	})
}

// SetLogLevel changes the level read from DOCA_GPUNETIO_LOG: messages of
// level <= l are printed.
func SetLogLevel(l LogLevel) {
	initLog()
	logLevel.Store(int32(l))
}

// SetLogger sends the library's messages to l (default: text to stderr).
func SetLogger(l *slog.Logger) {
	initLog()
	loggerMu.Lock()
	logger = l
	loggerMu.Unlock()
}

func logf(l LogLevel, format string, args ...any) {
	initLog()
	if int32(l) > logLevel.Load() {
		return
	}
	loggerMu.Lock()
	lg := logger
	loggerMu.Unlock()
	sl := slog.LevelInfo
	switch {
	case l <= LogErr:
		sl = slog.LevelError
	case l == LogWarning:
		sl = slog.LevelWarn
	case l == LogDebug:
		sl = slog.LevelDebug
	}
	lg.Log(context.Background(), sl, fmt.Sprintf(format, args...), "doca_level", l.String())
}
