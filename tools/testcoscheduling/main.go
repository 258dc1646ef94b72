// Command testcoscheduling is kube-scheduler v1.36.3 with one out-of-tree plugin registered: the
// Coscheduling plugin of sigs.k8s.io/scheduler-plugins (v0.35.4-devel, the version Trainer v2.3.0 pins; see
// tools/README-ground-truth.md), so that tests/e2e can show a PodGroup gang start all-or-nothing.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // rest client metrics, as upstream's main
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"sigs.k8s.io/scheduler-plugins/pkg/coscheduling"

	_ "sigs.k8s.io/scheduler-plugins/apis/config/scheme" // the plugin's args types in the scheduler config
)

func main() {
	command := app.NewSchedulerCommand(app.WithPlugin(coscheduling.Name, coscheduling.New))
	os.Exit(cli.Run(command))
}
