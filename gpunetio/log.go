package gpunetio

import (
	"log/slog"

	"github.com/gdaki/gpunetio/internal/doclog"
)

// LogLevel is a syslog-numbered level, as DOCA_GPUNETIO_LOG uses them.
type LogLevel int32

// The levels.
const (
	LogEmerg   LogLevel = doclog.Emerg
	LogAlert   LogLevel = doclog.Alert
	LogCrit    LogLevel = doclog.Crit
	LogErr     LogLevel = doclog.Err
	LogWarning LogLevel = doclog.Warning
	LogNotice  LogLevel = doclog.Notice
	LogInfo    LogLevel = doclog.Info
	LogDebug   LogLevel = doclog.Debug
)

func (l LogLevel) String() string { return doclog.Name(int32(l)) }

// SetLogLevel changes the level read from DOCA_GPUNETIO_LOG: messages of
// level <= l are printed. It governs the messages of package verbs (the
// "Use DOCA Verbs ... SDK/open" lines of its creators) and of the DOCA SDK
// loader too: the three share one logger, as DOCA's libraries do.
func SetLogLevel(l LogLevel) { doclog.SetLevel(int32(l)) }

// SetLogger sends the library's messages (this package's, package verbs'
// and the SDK loader's) to l (default: text to stderr; nil discards them).
// Each record carries the DOCA level name in the attribute doca_level.
func SetLogger(l *slog.Logger) { doclog.SetLogger(l) }

func logf(l LogLevel, format string, args ...any) { doclog.Printf(int32(l), format, args...) }
