// Package browsertest drives Debian's headless Chromium through
// chromedriver (WebDriver over HTTP) for the tests of the HTML pages: it
// opens a page from a file, runs script in it, reads the console and
// takes screenshots. Tests that use it skip when the browser is missing
// or under -short.
package browsertest
