// Command etcd is an unmodified etcd server (go.etcd.io/etcd/server/v3, the version
// k8s.io/kubernetes v1.36.3 pins) built from a project-owned module, for kf2jobset's
// end-to-end tests. See tools/README-ground-truth.md.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
