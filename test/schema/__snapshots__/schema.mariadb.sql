-- <prefix>batches
CREATE TABLE `<prefix>batches` (
  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  `size` int(10) unsigned NOT NULL,
  `created_at` datetime(3) NOT NULL DEFAULT current_timestamp(3),
  `finished_at` datetime(3) DEFAULT NULL,
  `on_complete` mediumtext DEFAULT NULL,
  `cancelled` int(10) unsigned NOT NULL DEFAULT 0,
  `name` varchar(191) DEFAULT NULL,
  PRIMARY KEY (`id`),
  KEY `ix_unfinished` (`finished_at`,`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>dead_jobs
CREATE TABLE `<prefix>dead_jobs` (
  `id` bigint(20) unsigned NOT NULL,
  `queue` varchar(64) NOT NULL,
  `name` varchar(128) NOT NULL,
  `payload` mediumtext NOT NULL,
  `priority` smallint(6) NOT NULL,
  `retry_times` int(10) unsigned NOT NULL,
  `max_retries` int(10) unsigned DEFAULT NULL,
  `batch_id` bigint(20) unsigned DEFAULT NULL,
  `idempotency_key` varchar(191) DEFAULT NULL,
  `last_error` text DEFAULT NULL,
  `created_at` datetime(3) NOT NULL,
  `failed_at` datetime(3) NOT NULL,
  `redriven_at` datetime(3) DEFAULT NULL,
  `redriven_as` bigint(20) unsigned DEFAULT NULL,
  PRIMARY KEY (`id`),
  KEY `ix_queue_failed` (`queue`,`failed_at`),
  KEY `ix_failed` (`failed_at`),
  KEY `ix_redriven` (`redriven_at`,`id`),
  KEY `ix_batch` (`batch_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>doorbells
CREATE TABLE `<prefix>doorbells` (
  `queue` varchar(64) NOT NULL,
  `worker_id` varchar(128) NOT NULL,
  `server` varchar(255) NOT NULL,
  `connection_id` bigint(20) unsigned NOT NULL,
  `token` char(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  `db_user` varchar(128) NOT NULL DEFAULT '',
  `created_at` datetime(3) NOT NULL,
  PRIMARY KEY (`queue`,`worker_id`),
  KEY `ix_worker` (`worker_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>idempotency_keys
CREATE TABLE `<prefix>idempotency_keys` (
  `queue` varchar(64) NOT NULL,
  `idempotency_key` varchar(191) NOT NULL,
  `job_id` bigint(20) unsigned DEFAULT NULL,
  `owner` char(24) NOT NULL,
  `expires_at` datetime(3) DEFAULT NULL,
  `created_at` datetime(3) NOT NULL DEFAULT current_timestamp(3),
  PRIMARY KEY (`queue`,`idempotency_key`),
  KEY `ix_owner` (`owner`),
  KEY `ix_job` (`job_id`),
  KEY `ix_expires` (`expires_at`,`job_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>jobs
CREATE TABLE `<prefix>jobs` (
  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  `queue` varchar(64) NOT NULL,
  `name` varchar(128) NOT NULL,
  `payload` mediumtext NOT NULL,
  `priority` smallint(6) NOT NULL DEFAULT 0,
  `run_at` datetime(3) NOT NULL,
  `lock_id` char(24) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  `locked_at` datetime(3) DEFAULT '1970-01-01 00:00:01.000',
  `retry_times` int(10) unsigned NOT NULL DEFAULT 0,
  `max_retries` int(10) unsigned DEFAULT NULL,
  `backoff` varchar(255) DEFAULT NULL,
  `batch_id` bigint(20) unsigned DEFAULT NULL,
  `idempotency_key` varchar(191) DEFAULT NULL,
  `last_error` text DEFAULT NULL,
  `created_at` datetime(3) NOT NULL DEFAULT current_timestamp(3),
  `updated_at` datetime(3) NOT NULL DEFAULT current_timestamp(3) ON UPDATE current_timestamp(3),
  `flags` tinyint(3) unsigned NOT NULL DEFAULT 0,
  `group_key` varchar(191) DEFAULT NULL,
  `claimed_at` datetime(3) NOT NULL DEFAULT '1970-01-01 00:00:01.000',
  `traceparent` varchar(55) CHARACTER SET ascii COLLATE ascii_bin DEFAULT NULL,
  `tracestate` varchar(512) CHARACTER SET ascii COLLATE ascii_bin DEFAULT NULL,
  PRIMARY KEY (`id`),
  KEY `ix_head` (`queue`,`lock_id`,`priority`,`run_at`),
  KEY `ix_batch` (`batch_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>job_debounces
CREATE TABLE `<prefix>job_debounces` (
  `queue` varchar(64) NOT NULL,
  `debounce_key` varchar(191) NOT NULL,
  `job_id` bigint(20) unsigned NOT NULL DEFAULT 0,
  `first_at` datetime(3) NOT NULL DEFAULT current_timestamp(3),
  PRIMARY KEY (`queue`,`debounce_key`),
  KEY `ix_job` (`job_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>job_edges
CREATE TABLE `<prefix>job_edges` (
  `parent_id` bigint(20) unsigned NOT NULL,
  `child_id` bigint(20) unsigned NOT NULL,
  `continue_on_failure` tinyint(1) NOT NULL DEFAULT 0,
  `parent_outcome` varchar(16) DEFAULT NULL,
  PRIMARY KEY (`parent_id`,`child_id`),
  KEY `ix_child` (`child_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>job_errors
CREATE TABLE `<prefix>job_errors` (
  `job_id` bigint(20) unsigned NOT NULL,
  `attempt` int(10) unsigned NOT NULL,
  `failed_at` datetime(3) NOT NULL,
  `worker_id` varchar(128) DEFAULT NULL,
  `code` varchar(64) DEFAULT NULL,
  `message` text NOT NULL,
  `stack` text DEFAULT NULL,
  PRIMARY KEY (`job_id`,`attempt`),
  KEY `ix_failed` (`failed_at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>job_graph_history
CREATE TABLE `<prefix>job_graph_history` (
  `child_id` bigint(20) unsigned NOT NULL,
  `parent_id` bigint(20) unsigned NOT NULL,
  `batch_id` bigint(20) unsigned NOT NULL,
  `continue_on_failure` tinyint(1) NOT NULL DEFAULT 0,
  `finished_at` datetime(3) NOT NULL,
  PRIMARY KEY (`child_id`,`parent_id`),
  KEY `ix_parent` (`parent_id`),
  KEY `ix_batch` (`batch_id`,`child_id`),
  KEY `ix_finished` (`finished_at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>job_groups
CREATE TABLE `<prefix>job_groups` (
  `queue` varchar(64) NOT NULL,
  `group_key` varchar(191) NOT NULL,
  `concurrency_limit` int(10) unsigned DEFAULT NULL,
  `active` int(10) unsigned NOT NULL DEFAULT 0,
  `updated_at` datetime(3) NOT NULL DEFAULT current_timestamp(3) ON UPDATE current_timestamp(3),
  `rate_limit` int(10) unsigned DEFAULT NULL,
  `rate_interval_ms` int(10) unsigned DEFAULT NULL,
  `rate_window_ms` bigint(20) DEFAULT NULL,
  `rate_used` int(10) unsigned NOT NULL DEFAULT 0,
  `paused_until` datetime(3) DEFAULT NULL,
  `start_window_ms` bigint(20) DEFAULT NULL,
  `starts` int(10) unsigned NOT NULL DEFAULT 0,
  PRIMARY KEY (`queue`,`group_key`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>job_group_members
CREATE TABLE `<prefix>job_group_members` (
  `queue` varchar(64) NOT NULL,
  `group_key` varchar(191) NOT NULL,
  `job_id` bigint(20) unsigned NOT NULL,
  PRIMARY KEY (`queue`,`group_key`,`job_id`),
  KEY `ix_job` (`job_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>job_history
CREATE TABLE `<prefix>job_history` (
  `job_id` bigint(20) unsigned NOT NULL,
  `queue` varchar(64) NOT NULL,
  `name` varchar(128) NOT NULL,
  `payload` mediumtext NOT NULL,
  `retry_times` int(10) unsigned NOT NULL,
  `batch_id` bigint(20) unsigned DEFAULT NULL,
  `created_at` datetime(3) NOT NULL,
  `finished_at` datetime(3) NOT NULL,
  `outcome` enum('completed','cancelled') NOT NULL DEFAULT 'completed',
  `priority` smallint(6) NOT NULL DEFAULT 0,
  `max_retries` int(10) unsigned DEFAULT NULL,
  `idempotency_key` varchar(191) DEFAULT NULL,
  `last_error` text DEFAULT NULL,
  `result` mediumtext DEFAULT NULL,
  `started_at` datetime(3) DEFAULT NULL,
  `retried_as` bigint(20) unsigned DEFAULT NULL,
  PRIMARY KEY (`job_id`),
  KEY `ix_finished` (`finished_at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>job_holds
CREATE TABLE `<prefix>job_holds` (
  `job_id` bigint(20) unsigned NOT NULL,
  `reason` varchar(16) NOT NULL,
  `run_at` datetime(3) NOT NULL,
  `waiting_parents` int(10) unsigned NOT NULL DEFAULT 0,
  `queue` varchar(64) DEFAULT NULL,
  `group_key` varchar(191) DEFAULT NULL,
  `priority` smallint(6) DEFAULT NULL,
  PRIMARY KEY (`job_id`),
  KEY `ix_group` (`queue`,`group_key`,`priority`,`run_at`,`job_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>job_logs
CREATE TABLE `<prefix>job_logs` (
  `job_id` bigint(20) unsigned NOT NULL,
  `attempt` int(10) unsigned NOT NULL,
  `line` int(10) unsigned NOT NULL,
  `logged_at` datetime(3) NOT NULL,
  `message` text NOT NULL,
  `fields` text DEFAULT NULL,
  `dropped` int(10) unsigned NOT NULL DEFAULT 0,
  PRIMARY KEY (`job_id`,`attempt`,`line`),
  KEY `ix_logged` (`logged_at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>job_payloads
CREATE TABLE `<prefix>job_payloads` (
  `job_id` bigint(20) unsigned NOT NULL,
  `payload` mediumtext NOT NULL,
  PRIMARY KEY (`job_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>job_progress
CREATE TABLE `<prefix>job_progress` (
  `job_id` bigint(20) unsigned NOT NULL,
  `progress` text NOT NULL,
  `updated_at` datetime(3) NOT NULL,
  PRIMARY KEY (`job_id`),
  KEY `ix_updated` (`updated_at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>job_traces
CREATE TABLE `<prefix>job_traces` (
  `kind` enum('job','batch') CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
  `id` bigint(20) unsigned NOT NULL,
  `traceparent` varchar(55) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `tracestate` varchar(512) CHARACTER SET ascii COLLATE ascii_bin DEFAULT NULL,
  `created_at` datetime(3) NOT NULL,
  PRIMARY KEY (`kind`,`id`),
  KEY `ix_created` (`created_at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>leases
CREATE TABLE `<prefix>leases` (
  `name` varchar(64) NOT NULL,
  `holder` varchar(191) NOT NULL DEFAULT '',
  `version` bigint(20) unsigned NOT NULL DEFAULT 0,
  `expires_at` datetime(3) NOT NULL,
  PRIMARY KEY (`name`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>maintenance_tasks
CREATE TABLE `<prefix>maintenance_tasks` (
  `task` varchar(64) NOT NULL,
  `holder` varchar(191) NOT NULL,
  `ran_at` datetime(3) NOT NULL,
  `duration_ms` int(10) unsigned NOT NULL,
  `changed` int(10) unsigned NOT NULL,
  `behind` tinyint(1) NOT NULL DEFAULT 0,
  PRIMARY KEY (`task`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>migrations
CREATE TABLE `<prefix>migrations` (
  `id` int(10) unsigned NOT NULL AUTO_INCREMENT,
  `name` varchar(255) DEFAULT NULL,
  `batch` int(11) DEFAULT NULL,
  `migration_time` timestamp NULL DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;

-- <prefix>migrations_lock
CREATE TABLE `<prefix>migrations_lock` (
  `index` int(10) unsigned NOT NULL AUTO_INCREMENT,
  `is_locked` int(11) DEFAULT NULL,
  PRIMARY KEY (`index`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;

-- <prefix>queues
CREATE TABLE `<prefix>queues` (
  `queue` varchar(64) NOT NULL,
  `paused_at` datetime(3) DEFAULT NULL,
  `updated_at` datetime(3) NOT NULL DEFAULT current_timestamp(3),
  `promise_start_within_ms` int(10) unsigned DEFAULT NULL,
  `promise_max_ready` int(10) unsigned DEFAULT NULL,
  `promise_broken_at` datetime(3) DEFAULT NULL,
  `concurrency_cap` int(10) unsigned DEFAULT NULL,
  `rate_limit` int(10) unsigned DEFAULT NULL,
  `rate_interval_ms` int(10) unsigned DEFAULT NULL,
  `rate_window_ms` bigint(20) DEFAULT NULL,
  `rate_used` int(10) unsigned NOT NULL DEFAULT 0,
  `limit_claims` bigint(20) unsigned NOT NULL DEFAULT 0,
  `paused_until` datetime(3) DEFAULT NULL,
  `group_concurrency` int(10) unsigned DEFAULT NULL,
  `fair_window` int(10) unsigned DEFAULT NULL,
  `group_rate_limit` int(10) unsigned DEFAULT NULL,
  `group_rate_interval_ms` int(10) unsigned DEFAULT NULL,
  PRIMARY KEY (`queue`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>queue_depths
CREATE TABLE `<prefix>queue_depths` (
  `queue` varchar(64) NOT NULL,
  `ready` int(10) unsigned NOT NULL,
  `ready_exact` tinyint(1) NOT NULL,
  `not_due` int(10) unsigned NOT NULL,
  `not_due_exact` tinyint(1) NOT NULL,
  `running` int(10) unsigned NOT NULL,
  `running_exact` tinyint(1) NOT NULL,
  `dead` int(10) unsigned NOT NULL,
  `dead_exact` tinyint(1) NOT NULL,
  `oldest_ready_ms` bigint(20) unsigned DEFAULT NULL,
  `read_at` datetime(3) NOT NULL,
  `held` int(10) unsigned NOT NULL DEFAULT 0,
  `held_exact` tinyint(1) NOT NULL DEFAULT 1,
  `queues` int(10) unsigned DEFAULT NULL,
  `queues_exact` tinyint(1) NOT NULL DEFAULT 1,
  PRIMARY KEY (`queue`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>schedules
CREATE TABLE `<prefix>schedules` (
  `schedule_key` varchar(191) NOT NULL,
  `job_name` varchar(128) NOT NULL,
  `queue` varchar(64) NOT NULL,
  `cron` varchar(128) DEFAULT NULL,
  `every_ms` bigint(20) unsigned DEFAULT NULL,
  `tz` varchar(64) DEFAULT NULL,
  `payload` mediumtext NOT NULL,
  `start_at` datetime(3) DEFAULT NULL,
  `end_at` datetime(3) DEFAULT NULL,
  `run_limit` int(10) unsigned DEFAULT NULL,
  `missed` varchar(8) NOT NULL DEFAULT 'skip',
  `paused` tinyint(1) NOT NULL DEFAULT 0,
  `next_run_at` datetime(3) DEFAULT NULL,
  `runs` int(10) unsigned NOT NULL DEFAULT 0,
  `last_tick_at` datetime(3) DEFAULT NULL,
  `last_job_id` bigint(20) unsigned DEFAULT NULL,
  `revision` int(10) unsigned NOT NULL DEFAULT 1,
  `created_at` datetime(3) NOT NULL DEFAULT current_timestamp(3),
  `updated_at` datetime(3) NOT NULL DEFAULT current_timestamp(3),
  PRIMARY KEY (`schedule_key`),
  KEY `ix_due` (`next_run_at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>schedule_runs
CREATE TABLE `<prefix>schedule_runs` (
  `schedule_key` varchar(191) NOT NULL,
  `seq` int(10) unsigned NOT NULL,
  `tick_at` datetime(3) NOT NULL,
  `job_id` bigint(20) unsigned DEFAULT NULL,
  `queue` varchar(64) NOT NULL,
  `fired_at` datetime(3) NOT NULL DEFAULT current_timestamp(3),
  PRIMARY KEY (`schedule_key`,`seq`),
  UNIQUE KEY `ux_tick` (`schedule_key`,`tick_at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>settings
CREATE TABLE `<prefix>settings` (
  `name` varchar(64) NOT NULL,
  `value` varchar(255) NOT NULL,
  `updated_at` datetime(3) NOT NULL,
  PRIMARY KEY (`name`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- <prefix>workers
CREATE TABLE `<prefix>workers` (
  `id` varchar(128) NOT NULL,
  `host` varchar(64) NOT NULL,
  `name` varchar(64) DEFAULT NULL,
  `pid` int(10) unsigned NOT NULL,
  `queues` text NOT NULL,
  `started_at` datetime(3) NOT NULL,
  `heartbeat_at` datetime(3) NOT NULL,
  `beats` bigint(20) unsigned NOT NULL DEFAULT 0,
  `heartbeat_interval_ms` int(10) unsigned NOT NULL,
  `lock_timeout_ms` int(10) unsigned DEFAULT NULL,
  `concurrency` int(10) unsigned NOT NULL,
  `concurrency_limit` int(10) unsigned NOT NULL,
  `in_flight` int(10) unsigned NOT NULL DEFAULT 0,
  `processed` bigint(20) unsigned NOT NULL DEFAULT 0,
  `failed` bigint(20) unsigned NOT NULL DEFAULT 0,
  `cpu` double DEFAULT NULL,
  `free_mem` double DEFAULT NULL,
  `claim_latency_ms` double DEFAULT NULL,
  `counters` text DEFAULT NULL,
  `metrics` mediumtext DEFAULT NULL,
  `job_names` mediumtext DEFAULT NULL,
  `unknown_jobs` text DEFAULT NULL,
  PRIMARY KEY (`id`),
  KEY `ix_heartbeat` (`heartbeat_at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
