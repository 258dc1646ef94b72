// Command testcontrollermanager is an unmodified kube-controller-manager v1.36.3 built from a
// project-owned module, for kf2jobset's end-to-end tests (it runs the Job and garbage-collector
// controllers). See tools/README-ground-truth.md.
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones, as upstream

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
