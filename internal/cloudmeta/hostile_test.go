package cloudmeta

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// azureWith returns the recorded Azure document with replacements
// (old, new, old, new...), each of the first occurrence.
func azureWith(t *testing.T, pairs ...string) []byte {
	t.Helper()
	b := string(readTestdata(t, "azure-instance.json"))
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(b, pairs[i]) {
			t.Fatalf("fixture has no %q", pairs[i])
		}
		b = strings.Replace(b, pairs[i], pairs[i+1], 1)
	}
	return []byte(b)
}

// Hostile Azure answers: refused whole when they cannot be trusted,
// field by field when one value is implausible.
func TestHostileAzure(t *testing.T) {
	big := strings.Repeat(`{"lun":"7","diskSizeGB":"10","managedDisk":{"storageAccountType":"Premium_LRS"}},`, 10000)
	cases := []struct {
		name     string
		body     []byte
		maxBody  int64
		detected bool
		outcome  string // probe outcome substring when not detected
		check    func(t *testing.T, info Info)
	}{
		{name: "over the size cap", body: readTestdata(t, "azure-instance.json"), maxBody: 4096, outcome: "larger than the cap"},
		{name: "broken JSON", body: []byte(`{"compute": {"vmSize": "Standard_D8s_v3"`), outcome: "unreadable Azure IMDS instance document"},
		{name: "two documents", body: []byte(`{"compute":{"vmSize":"Standard_D8s_v3"}} {}`), outcome: "more than one JSON value"},
		{name: "not JSON", body: []byte("<html>portal</html>"), outcome: "unreadable"},
		{name: "terminal escape in vmSize", body: azureWith(t, `"vmSize": "Standard_D8s_v3"`, `"vmSize": "Standard_D8s_v3\u001b[2J"`), outcome: "no usable compute.vmSize"},
		{name: "path in vmSize", body: azureWith(t, `"vmSize": "Standard_D8s_v3"`, `"vmSize": "../../etc/passwd"`), outcome: "no usable compute.vmSize"},
		{name: "deep nesting", body: []byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000)), outcome: "unreadable"},
		{
			name: "implausible figures", detected: true,
			body: azureWith(t, `"diskSizeGB": "512"`, `"diskSizeGB": "99999999999999999999999"`),
			check: func(t *testing.T, info Info) {
				d := info.Disks[1]
				if d.SizeBytes != 0 || d.Spec != "" || !anyContains(d.Notes, "not a plausible size") {
					t.Errorf("%+v", d)
				}
			},
		},
		{
			name: "negative, exponent and NaN", detected: true,
			body: azureWith(t,
				`"bytesPerSecondThrottle": "500000000"`, `"bytesPerSecondThrottle": "NaN"`,
				`"diskSizeGB": "1024"`, `"diskSizeGB": "-1024"`,
				`"lun": "1"`, `"lun": "1e0"`,
				`"opsPerSecondThrottle": "20000"`, `"opsPerSecondThrottle": "1e400"`),
			check: func(t *testing.T, info Info) {
				for _, d := range info.Disks {
					if d.Type != "UltraSSD_LRS" {
						continue
					}
					if d.LUN != nil || d.ProvisionedIOPS != 0 || d.ProvisionedBWBytes != 0 || d.SizeBytes != 0 || d.Spec != "" || d.Device != "" {
						t.Errorf("%+v", d)
					}
					return
				}
				t.Error("no ultra disk")
			},
		},
		{
			name: "numbers instead of strings", detected: true,
			body: azureWith(t, `"diskSizeGB": "512"`, `"diskSizeGB": 512`),
			check: func(t *testing.T, info Info) {
				if info.Disks[1].Spec != "azure:P20" {
					t.Errorf("%+v", info.Disks[1])
				}
			},
		},
		{
			name: "wrong type for the storage profile", detected: true,
			body: []byte(`{"compute": {"vmSize": "Standard_D8s_v3", "location": "westeurope", "storageProfile": "none"}}`),
			check: func(t *testing.T, info Info) {
				if len(info.Disks) != 0 || !anyContains(info.Notes, "ignored") || info.VM != "azure:Standard_D8s_v3" {
					t.Errorf("%+v", info)
				}
			},
		},
		{
			name: "ten thousand data disks", detected: true,
			body: []byte(`{"compute": {"vmSize": "Standard_D8s_v3", "storageProfile": {"dataDisks": [` + big + `{}]}}}`),
			check: func(t *testing.T, info Info) {
				if len(info.Disks) != maxDisks || !anyContains(info.Notes, "the first 256 are read") {
					t.Errorf("%d disks, notes %q", len(info.Disks), info.Notes)
				}
				// Every entry claims LUN 7: none can be tied to a device.
				if info.Disks[0].LUN != nil && info.Disks[1].LUN != nil {
					t.Errorf("duplicate LUNs kept: %+v", info.Disks[:2])
				}
			},
		},
		{
			name: "unknown VM size and storage type", detected: true,
			body: azureWith(t, `"storageAccountType": "Premium_LRS"`, `"storageAccountType": "Premium_Quantum"`,
				`"vmSize": "Standard_D8s_v3"`, `"vmSize": "Standard_Z99s_v9"`),
			check: func(t *testing.T, info Info) {
				if info.VMSize != "Standard_Z99s_v9" || info.VM != "" || !anyContains(info.Notes, "Standard_Z99s_v9 is not in the limits catalog") {
					t.Errorf("%+v", info)
				}
				if d := info.Disks[1]; d.Spec != "" || d.Type != "Premium_Quantum" || !anyContains(d.Notes, `no azure disk type "Premium_Quantum"`) {
					t.Errorf("%+v", d)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, &fake{provider: azure, override: map[string][]byte{"azure-instance.json": tc.body}})
			o := testOptions(t, s.URL, azureTree(t))
			o.Providers = []string{azure}
			o.MaxBodyBytes = tc.maxBody
			info, err := detect(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if info.Detected() != tc.detected {
				t.Fatalf("detected %v: %+v", info.Detected(), info.Probes)
			}
			if !tc.detected && !strings.Contains(info.Probes[0].Outcome, tc.outcome) {
				t.Errorf("outcome %q, want %q", info.Probes[0].Outcome, tc.outcome)
			}
			if tc.check != nil {
				tc.check(t, info)
			}
		})
	}
}

// A redirect is refused, not followed.
func TestRedirectRefused(t *testing.T) {
	az := &fake{provider: azure}
	f := &fake{}
	f.handler = func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved/metadata/instance" {
			az.ServeHTTP(w, r)
			return
		}
		http.Redirect(w, r, "/moved"+r.URL.RequestURI(), http.StatusFound)
	}
	s := serve(t, f)
	az.t = t
	o := testOptions(t, s.URL, fixture(t, nil, nil))
	o.Providers = []string{azure}
	info, err := detect(context.Background(), o)
	if err != nil || info.Detected() || info.Probes[0].Outcome != "HTTP 302 (redirect refused)" {
		t.Fatalf("%v %+v", err, info)
	}
	for _, r := range f.requests() {
		if strings.Contains(r, "/moved") {
			t.Errorf("followed the redirect: %q", f.requests())
		}
	}
}

func TestHostileTokens(t *testing.T) {
	cases := []struct {
		provider string
		handler  http.HandlerFunc
	}{
		{aws, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("abc\r\nX-Injected: 1")) }},
		{aws, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("a", 9000))) }},
		{aws, func(w http.ResponseWriter, r *http.Request) {}},
		{ibm, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"access_token": "a b"}`)) }},
		{ibm, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"access_token": {"x": 1}}`)) }},
		{ibm, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`["token"]`)) }},
	}
	for i, tc := range cases {
		t.Run(fmt.Sprint(tc.provider, i), func(t *testing.T) {
			f := &fake{handler: tc.handler}
			s := serve(t, f)
			o := testOptions(t, s.URL, fixture(t, nil, nil))
			o.Providers = []string{tc.provider}
			info, err := detect(context.Background(), o)
			if err != nil || info.Detected() || !strings.Contains(info.Probes[0].Outcome, "token") {
				t.Fatalf("%v %+v", err, info)
			}
			if n := len(f.requests()); n != 1 {
				t.Errorf("%d requests after a bad token: %q", n, f.requests())
			}
		})
	}
}

// A GCP answer without the Metadata-Flavor header is some other server.
func TestGCPNeedsFlavorHeader(t *testing.T) {
	s := serve(t, &fake{handler: func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("projects/1/machineTypes/n2-standard-8"))
	}})
	o := testOptions(t, s.URL, fixture(t, nil, nil))
	o.Providers = []string{gcp}
	info, err := detect(context.Background(), o)
	if err != nil || info.Detected() || !strings.Contains(info.Probes[0].Outcome, "Metadata-Flavor") {
		t.Fatalf("%v %+v", err, info)
	}
}

// A device name from the metadata never leaves the dev root.
func TestGCPDeviceNameTraversal(t *testing.T) {
	disks := `[{"deviceName":"../../../../etc/passwd","index":1,"type":"PERSISTENT-SSD"},{"deviceName":"bench-data","index":2,"type":"PERSISTENT-EXOTIC"},{"deviceName":"x\u001b[31m","type":"PERSISTENT"}]`
	tree := fixture(t, map[string]string{"etc/passwd": "root:x:0:0"}, map[string]string{
		"dev/disk/by-id/google-bench-data": "../../sdb",
	})
	s := serve(t, &fake{provider: gcp, override: map[string][]byte{"gcp-disks.json": []byte(disks)}})
	o := testOptions(t, s.URL, tree)
	info, err := detect(context.Background(), o)
	if err != nil || info.Provider != gcp || len(info.Disks) != 3 {
		t.Fatalf("%v %+v", err, info)
	}
	if d := info.Disks[0]; d.Device != "" || d.Name != "" || d.Spec != "" || !anyContains(d.Notes, "no usable device name") {
		t.Errorf("%+v", d)
	}
	if d := info.Disks[1]; d.Device != "sdb" || d.Spec != "" || !anyContains(d.Notes, "no disk type for PERSISTENT-EXOTIC") {
		t.Errorf("%+v", d)
	}
	if d := info.Disks[2]; d.Name != "" || d.Device != "" {
		t.Errorf("%+v", d)
	}
}

// With the default timeouts and no metadata service behind the address
// (a dial that goes unanswered), Detect gives up after the dial timeout.
func TestBlackholeTiming(t *testing.T) {
	o := Options{
		SysRoot: t.TempDir(), DevRoot: t.TempDir(),
		dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			// What a dropped SYN looks like from net.Dialer: nothing
			// until its timeout.
			tm := time.NewTimer(defaultDialTimeout)
			defer tm.Stop()
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-tm.C:
				return nil, &net.OpError{Op: "dial", Net: network, Err: timeoutErr{}}
			}
		},
	}
	start := time.Now()
	info, err := detect(context.Background(), o)
	el := time.Since(start)
	if err != nil || info.Detected() {
		t.Fatalf("%v %+v", err, info)
	}
	if el < defaultDialTimeout || el > defaultDialTimeout+300*time.Millisecond {
		t.Errorf("took %v, want just over the %v dial timeout", el, defaultDialTimeout)
	}
	if !strings.Contains(info.Probes[0].Outcome, "no connection within the 250ms connect timeout") {
		t.Errorf("outcome %q", info.Probes[0].Outcome)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }
