// Command testtrainingoperator runs the Kubeflow Training Operator controllers and validating
// webhooks (github.com/kubeflow/training-operator, the packages behind cmd/training-operator.v1)
// for kf2jobset's end-to-end tests. See tools/README-ground-truth.md.
//
// One program, two builds: go.mod pins v1.9.4 (every kind but MXJob), v1.8.1.mod pins v1.8.1, the
// last release with MXJob (removed in v1.9.0), built with -modfile=v1.8.1.mod. The packages this
// file uses have the same API in both releases.
//
// It is kf2jobset's own entry point, not a copy of upstream's: the reconcilers and webhooks are
// upstream's, unchanged, but everything listens on loopback and the webhook server takes its
// serving certificate from --webhook-cert-dir (written by the test harness, signed by the test
// CA) instead of upstream's in-cluster cert rotator, which needs a Service DNS name, a Secret in
// the operator's namespace and a hard-coded /tmp directory. The harness registers the
// ValidatingWebhookConfiguration itself (clientConfig.url + caBundle). Controllers and webhooks
// are set up before the manager starts, so /readyz on the probe address means every webhook
// path is served.
package main

import (
	"errors"
	"flag"
	"os"
	"strings"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/flowcontrol"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	volcanoclient "volcano.sh/apis/pkg/client/clientset/versioned"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"github.com/kubeflow/training-operator/pkg/config"
	controllerv1 "github.com/kubeflow/training-operator/pkg/controller.v1"
	"github.com/kubeflow/training-operator/pkg/controller.v1/common"
	"github.com/kubeflow/training-operator/pkg/webhooks"
)

var log = ctrl.Log.WithName("testtrainingoperator")

func fail(err error, msg string, kv ...any) {
	log.Error(err, msg, kv...)
	os.Exit(1)
}

func main() {
	var (
		metricsAddr, probeAddr, webhookHost, webhookCertDir string
		gangSchedulerName, namespace                        string
		webhookPort, threads, qps, burst                    int
		schemes                                             controllerv1.EnabledSchemes
	)
	// Same names and meanings as upstream's flags, except that every default address is loopback
	// and the webhook host and certificate directory are flags.
	flag.StringVar(&metricsAddr, "metrics-bind-address", "127.0.0.1:8080", "metrics address (\"0\" disables)")
	flag.StringVar(&probeAddr, "health-probe-bind-address", "127.0.0.1:8081", "healthz/readyz address")
	flag.StringVar(&webhookHost, "webhook-host", "127.0.0.1", "address the webhook server binds")
	flag.IntVar(&webhookPort, "webhook-server-port", 9443, "port of the webhook server")
	flag.StringVar(&webhookCertDir, "webhook-cert-dir", "", "directory with tls.crt and tls.key for the webhook server (required)")
	flag.Var(&schemes, "enable-scheme", "enable a job kind (repeatable, case-insensitive); default: all")
	flag.StringVar(&gangSchedulerName, "gang-scheduler-name", "", "volcano, or a scheduler-plugins scheduler name")
	flag.StringVar(&namespace, "namespace", os.Getenv("KUBEFLOW_NAMESPACE"), "watch only this namespace (default: all)")
	flag.IntVar(&threads, "controller-threads", 1, "worker threads per controller")
	flag.IntVar(&qps, "kube-api-qps", 20, "client QPS")
	flag.IntVar(&burst, "kube-api-burst", 30, "client burst")
	flag.StringVar(&config.Config.PyTorchInitContainerImage, "pytorch-init-container-image",
		config.PyTorchInitContainerImageDefault, "image of the PyTorch init container")
	flag.StringVar(&config.Config.PyTorchInitContainerTemplateFile, "pytorch-init-container-template-file",
		config.PyTorchInitContainerTemplateFileDefault, "template file of the PyTorch init container")
	flag.IntVar(&config.Config.PyTorchInitContainerMaxTries, "pytorch-init-container-max-tries",
		config.PyTorchInitContainerMaxTriesDefault, "tries of the PyTorch init container")
	flag.StringVar(&config.Config.MPIKubectlDeliveryImage, "mpi-kubectl-delivery-image",
		config.MPIKubectlDeliveryImageDefault, "image of the MPI launcher's init container")
	zapOpts := zap.Options{Development: true, StacktraceLevel: zapcore.DPanicLevel}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse() // --kubeconfig is registered by controller-runtime
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	if webhookCertDir == "" {
		fail(errors.New("--webhook-cert-dir is required"), "bad flags")
	}

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflowv1.AddToScheme(scheme))
	utilruntime.Must(volcanov1beta1.AddToScheme(scheme))
	utilruntime.Must(schedulerpluginsv1alpha1.AddToScheme(scheme))

	var cacheOpts cache.Options
	if namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	cfg := ctrl.GetConfigOrDie()
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(float32(qps), burst)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		WebhookServer:          webhook.NewServer(webhook.Options{Host: webhookHost, Port: webhookPort, CertDir: webhookCertDir}),
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         false,
		Cache:                  cacheOpts,
	})
	if err != nil {
		fail(err, "unable to create the manager")
	}

	gang := common.GenNonGangSchedulerSetupFunc()
	switch {
	case strings.EqualFold(gangSchedulerName, string(common.GangSchedulerVolcano)):
		gang = common.GenVolcanoSetupFunc(volcanoclient.NewForConfigOrDie(mgr.GetConfig()))
		requireKind(mgr, volcanov1beta1.SchemeGroupVersion.WithKind("PodGroup"))
	case gangSchedulerName != "":
		gang = common.GenSchedulerPluginsSetupFunc(mgr.GetClient(), gangSchedulerName)
		requireKind(mgr, schedulerpluginsv1alpha1.SchemeGroupVersion.WithKind("PodGroup"))
	}
	if schemes.Empty() {
		schemes.FillAll()
	}
	for _, kind := range schemes {
		if err := controllerv1.SupportedSchemeReconciler[kind](mgr, gang, threads); err != nil {
			fail(err, "unable to create the controller", "kind", kind)
		}
		if err := webhooks.SupportedSchemeWebhook[kind](mgr); err != nil {
			fail(err, "unable to set up the webhook", "kind", kind)
		}
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		fail(err, "unable to add the health check")
	}
	if err := mgr.AddReadyzCheck("readyz", mgr.GetWebhookServer().StartedChecker()); err != nil {
		fail(err, "unable to add the ready check")
	}
	log.Info("starting manager", "webhook", webhookHost, "port", webhookPort, "kinds", schemes.String())
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fail(err, "manager stopped")
	}
}

func requireKind(mgr ctrl.Manager, gvk schema.GroupVersionKind) {
	if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
		if meta.IsNoMatchError(err) {
			fail(err, "CRD missing", "gvk", gvk.String())
		}
		fail(err, "unable to look up CRD", "gvk", gvk.String())
	}
}
