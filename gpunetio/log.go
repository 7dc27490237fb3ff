package gpunetio

import (
	"io"
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

// LogFormat is how the library's messages are printed.
type LogFormat int32

// The log formats.
const (
	// LogFormatStructured (the default) sends log/slog records to the
	// logger of SetLogger.
	LogFormatStructured = LogFormat(doclog.FormatStructured)
	// LogFormatDOCA writes DOCA's own lines to the writer of SetLogOutput
	// (default stderr): "<ctime date> [<LEVEL>] [<source file>]: <line>:
	// <function>(): <message>", for example
	// "Wed Apr  1 10:42:00 2026 [INFO] [hl.go]: 255: NewQPHL(): ...".
	// GPUNETIO_LOG_FORMAT=doca in the environment selects it too.
	LogFormatDOCA = LogFormat(doclog.FormatDOCA)
)

// SetLogFormat selects the output format of the library's messages (this
// package's, package verbs' and the SDK loader's). The level
// (DOCA_GPUNETIO_LOG, SetLogLevel) filters both formats alike.
func SetLogFormat(f LogFormat) { doclog.SetFormat(doclog.Format(f)) }

// SetLogOutput sets where LogFormatDOCA writes (default stderr; nil
// discards).
func SetLogOutput(w io.Writer) { doclog.SetOutput(w) }

func logf(l LogLevel, format string, args ...any) { doclog.Printf(int32(l), format, args...) }
