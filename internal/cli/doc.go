// Package cli builds the iolens command tree. Each command has its own
// constructor and flag struct; streams are injected and only main turns an
// error into an exit code.
package cli
