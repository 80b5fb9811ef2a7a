package fingerprint

import "testing"

// sysbenchQueries is one oltp_read_write transaction as sysbench 1.0
// sends it (the point selects repeat ten times in a real run).
var sysbenchQueries = [][]byte{
	[]byte("BEGIN"),
	[]byte("SELECT c FROM sbtest1 WHERE id=5023"),
	[]byte("SELECT c FROM sbtest7 WHERE id=4971"),
	[]byte("SELECT c FROM sbtest3 WHERE id=5012"),
	[]byte("SELECT c FROM sbtest1 WHERE id BETWEEN 5009 AND 5108"),
	[]byte("SELECT SUM(k) FROM sbtest6 WHERE id BETWEEN 4996 AND 5095"),
	[]byte("SELECT c FROM sbtest4 WHERE id BETWEEN 5015 AND 5114 ORDER BY c"),
	[]byte("SELECT DISTINCT c FROM sbtest3 WHERE id BETWEEN 4983 AND 5082 ORDER BY c"),
	[]byte("UPDATE sbtest2 SET k=k+1 WHERE id=4988"),
	[]byte("UPDATE sbtest8 SET c='30981637488-09387406839-91452453938-04932437466-51093282652-43373434436-89186298513-62374880574-47355618337-32698466232' WHERE id=5001"),
	[]byte("DELETE FROM sbtest5 WHERE id=5007"),
	[]byte("INSERT INTO sbtest1 (id, k, c, pad) VALUES (5041, 5023, '83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330', '67847967377-48000963322-62604785301-91415491898-96926520291')"),
	[]byte("COMMIT"),
}

// BenchmarkAppend measures the hot path on a sysbench oltp_read_write mix;
// MB/s is over the query bytes.
func BenchmarkAppend(b *testing.B) {
	n := 0
	for _, q := range sysbenchQueries {
		n += len(q)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	dst := make([]byte, 0, 1024)
	for b.Loop() {
		for _, q := range sysbenchQueries {
			dst = Append(dst[:0], q)
		}
	}
}

// BenchmarkFingerprint is the string API (one allocation for the result).
func BenchmarkFingerprint(b *testing.B) {
	qs := make([]string, len(sysbenchQueries))
	n := 0
	for i, q := range sysbenchQueries {
		qs[i] = string(q)
		n += len(q)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, q := range qs {
			_ = Fingerprint(q)
		}
	}
}
