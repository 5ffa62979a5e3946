package procstatus

import (
	"os"
	"testing"
)

func TestKiBReadsThisProcess(t *testing.T) {
	rss, err := KiB(os.Getpid(), "VmRSS")
	if err != nil || rss <= 0 {
		t.Fatalf("VmRSS %d, %v", rss, err)
	}
	if _, err := KiB(os.Getpid(), "NoSuchField"); err == nil {
		t.Fatal("a missing field read as a figure")
	}
}
