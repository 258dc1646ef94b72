// Command testmpioperator runs the MPI Operator v0.8.2 controller (github.com/kubeflow/mpi-operator,
// package pkg/controller, which reconciles MPIJob kubeflow.org/v2beta1) for kf2jobset's
// end-to-end tests. See tools/README-ground-truth.md.
//
// It is kf2jobset's own entry point, not a copy of upstream's cmd/mpi-operator: the controller,
// its informers and its flags (options.ServerOption) are upstream's, unchanged, but upstream's
// entry point always runs leader election and binds its health server to ":8080" (every
// interface, a fixed port), so two test stacks on one machine could not run side by side. This
// one runs the controller directly (one process per test API server, so no leader election),
// serves /healthz and /readyz on --health-probe-bind-address (loopback) and answers /readyz
// only once every informer cache has synced, i.e. when the controller's workers start.
package main

import (
	"context"
	"errors"
	"flag"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	kubeinformers "k8s.io/client-go/informers"
	kubeclientset "k8s.io/client-go/kubernetes"
	clientgokubescheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kubeflow/mpi-operator/cmd/mpi-operator/app/options"
	mpijobclientset "github.com/kubeflow/mpi-operator/pkg/client/clientset/versioned"
	kubeflowscheme "github.com/kubeflow/mpi-operator/pkg/client/clientset/versioned/scheme"
	informers "github.com/kubeflow/mpi-operator/pkg/client/informers/externalversions"
	"github.com/kubeflow/mpi-operator/pkg/controller"
	"github.com/kubeflow/mpi-operator/pkg/version"
	volcanoclient "volcano.sh/apis/pkg/client/clientset/versioned"
)

func main() {
	opt := options.NewServerOption()
	opt.AddFlags(flag.CommandLine) // upstream's flags, names and defaults
	probeAddr := flag.String("health-probe-bind-address", "127.0.0.1:8082",
		"address of /healthz and /readyz (ready once the informer caches have synced)")
	flag.Parse()
	if opt.PrintVersion {
		version.PrintVersionAndExit("v2")
	}
	if opt.GangSchedulingName != "" && opt.GangSchedulingName != options.GangSchedulerVolcano {
		klog.Fatal("--gang-scheduling: only volcano is supported by this entry point (tests/e2e/test_mpi_volcano.py)")
	}
	if opt.MonitoringPort != 0 {
		klog.Fatal("--monitoring-port is not supported by this entry point (upstream binds it on every interface)")
	}
	if p := os.Getenv("KUBECONFIG"); p != "" { // as upstream: the environment wins over --kubeConfig
		opt.Kubeconfig = p
	}
	klog.Infof("%+v", version.Info("v2"))
	klog.Infof("Server options: %+v", opt)

	cfg, err := clientcmd.BuildConfigFromFlags(opt.MasterURL, opt.Kubeconfig)
	if err != nil {
		klog.Fatalf("building the client config: %v", err)
	}
	cfg.QPS = float32(opt.QPS)
	cfg.Burst = opt.Burst
	kubeClient := kubeclientset.NewForConfigOrDie(rest.AddUserAgent(cfg, "mpi-operator"))
	mpiJobClient := mpijobclientset.NewForConfigOrDie(cfg)
	if err := kubeflowscheme.AddToScheme(clientgokubescheme.Scheme); err != nil { // for events, as upstream
		klog.Fatalf("adding the MPIJob scheme: %v", err)
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()

	var kubeOpts []kubeinformers.SharedInformerOption
	var mpiOpts []informers.SharedInformerOption
	if opt.Namespace != "" {
		kubeOpts = append(kubeOpts, kubeinformers.WithNamespace(opt.Namespace))
		mpiOpts = append(mpiOpts, informers.WithNamespace(opt.Namespace))
	}
	kubeInformers := kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, 0, kubeOpts...)
	mpiInformers := informers.NewSharedInformerFactoryWithOptions(mpiJobClient, 0, mpiOpts...)
	var volcanoClient volcanoclient.Interface // as upstream's server.go: a client only when gang-scheduling
	if opt.GangSchedulingName == options.GangSchedulerVolcano {
		volcanoClient = volcanoclient.NewForConfigOrDie(cfg)
	}
	ctrl, err := controller.NewMPIJobController(ctx, kubeClient, mpiJobClient, volcanoClient, nil,
		kubeInformers.Core().V1().ConfigMaps(),
		kubeInformers.Core().V1().Secrets(),
		kubeInformers.Core().V1().Services(),
		kubeInformers.Batch().V1().Jobs(),
		kubeInformers.Core().V1().Pods(),
		kubeInformers.Scheduling().V1().PriorityClasses(),
		mpiInformers.Kubeflow().V2beta1().MPIJobs(),
		opt)
	if err != nil {
		klog.Fatalf("setting up the MPIJob controller: %v", err)
	}

	var ready atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "informer caches not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	ln, err := net.Listen("tcp", *probeAddr)
	if err != nil {
		klog.Fatalf("listening on %s: %v", *probeAddr, err)
	}
	go func() {
		if err := http.Serve(ln, mux); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.Fatalf("probe server: %v", err)
		}
	}()

	kubeInformers.Start(ctx.Done())
	mpiInformers.Start(ctx.Done())
	if ctrl.PodGroupCtrl != nil {
		ctrl.PodGroupCtrl.StartInformerFactory(ctx.Done())
	}
	go func() {
		// The same informers the controller waits for in Run before it starts its workers.
		for t, ok := range kubeInformers.WaitForCacheSync(ctx.Done()) {
			if !ok {
				klog.Fatalf("informer cache for %v did not sync", t)
			}
		}
		for t, ok := range mpiInformers.WaitForCacheSync(ctx.Done()) {
			if !ok {
				klog.Fatalf("informer cache for %v did not sync", t)
			}
		}
		if ctrl.PodGroupCtrl != nil && !cache.WaitForCacheSync(ctx.Done(), ctrl.PodGroupCtrl.PodGroupSharedIndexInformer().HasSynced) {
			klog.Fatal("PodGroup informer cache did not sync")
		}
		ready.Store(true)
	}()
	if err := ctrl.Run(opt.Threadiness, ctx.Done()); err != nil {
		klog.Fatalf("running the controller: %v", err)
	}
}
