package demo

import (
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// arrival is an operation submitted at a time after the start.
type arrival struct {
	at   time.Duration
	name string
	spec *pb.OperationSpec
}

func op(title, pool string, jobs int32, d time.Duration) *pb.OperationSpec {
	return &pb.OperationSpec{Title: title, Pool: pool, Tasks: []*pb.TaskSpec{{
		Name: "main", JobCount: jobs,
		JobResources: &pb.Resources{Cpu: 1, Memory: 2 << 30, UserSlots: 1},
		Run:          &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(d)},
	}}}
}

// workload: everyone wants more than the cluster at first (guarantees and
// weights decide, the relaxed pool spends its volume); a production burst
// arrives at 10s (the burst pool takes its 32 cores at once); at 20s the
// backup pool gets two more operations, and the second waits in the queue
// of its max_running_operation_count.
func workload() []arrival {
	return []arrival{
		{0, "adhoc-report", op("adhoc-report", "project-adhoc", 400, 3*time.Second)},
		{0, "batch-etl", op("batch-etl", "project-batch", 2000, 2*time.Second)},
		{0, "backup-nightly", op("backup-nightly", "project-backup", 400, 3*time.Second)},
		{0, "research", op("research", "relaxed", 2000, 2*time.Second)},
		{10 * time.Second, "prod-burst", op("prod-burst", "burst", 400, 3*time.Second)},
		{20 * time.Second, "backup-weekly", op("backup-weekly", "project-backup", 100, 2*time.Second)},
		{20 * time.Second, "backup-monthly", op("backup-monthly", "project-backup", 100, 2*time.Second)},
	}
}
