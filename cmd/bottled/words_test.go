package main

import "testing"

func TestWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{count(0, "project"), "0 projects"},
		{count(1, "project"), "1 project"},
		{countAs(2, "directory", "directories"), "2 directories"},
		{size(0), "0 bytes"},
		{size(1), "1 byte"},
		{size(999), "999 bytes"},
		{size(1000), "1.0 KB"},
		{size(12_345), "12 KB"},
		{size(999_499), "999 KB"},
		{size(999_600), "1.0 MB"},
		{size(3_400_000), "3.4 MB"},
		{size(1_090_000_000), "1.1 GB"},
		{rate(7_300_000, 1), "7.3 MB/s"},
		{rate(300_000, 2), "150 KB/s"},
		{rate(0, 0), "0 bytes/s"},
		{sizeOf(512e6, 900e6), "512 of 900 MB"},
		{sizeOf(512e6, 1090e6), "512 MB of 1.1 GB"},
		{sizeOf(0, 800e3), "0 bytes of 800 KB"},
		{sizeOf(10, 20), "10 bytes of 20 bytes"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
