package metrics

import "testing"

func TestCheckPushURL(t *testing.T) {
	for in, ok := range map[string]bool{"": false, "http://127.0.0.1:9091": true, "https://pgw.example.com": true,
		"127.0.0.1:9091": false, "ftp://x:1": false, "http://": false, "http://x:1/?a=b": false} {
		if err := CheckPushURL(in); ok != (err == nil) {
			t.Errorf("CheckPushURL(%q) = %v", in, err)
		}
	}
}
